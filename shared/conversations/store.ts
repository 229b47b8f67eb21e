import { QueryTypes, type Transaction } from 'sequelize';
import { db } from '../db/sequelize';
import { scopeSql, scopeValues, type StoreScope } from '../tenancy/store-scope';

type Json = Record<string, unknown>;

/** A conversation as its org reads it (OpenAI's ConversationResource but the `object`). */
export interface ConversationRow {
  id: string;
  metadata: Record<string, string>;
  created_at: Date;
}

export interface NewConversation {
  orgId: string;
  id: string;
  projectId: string | null;
  apiKeyId: string | null;
  metadata: Record<string, string>;
}

/**
 * Adds items at the end of a conversation, in order, in the caller's transaction or one of its own.
 * An item whose id the conversation already holds replaces nothing: the insert fails (unique id).
 */
async function insertItems(orgId: string, conversationId: string, items: Json[], transaction?: Transaction): Promise<void> {
  if (!items.length) return;
  const values = items.map((_, i) => `(:orgId, :conversationId, :id${i}, :item${i}::jsonb)`).join(', ');
  const replacements: Json = { orgId, conversationId };
  items.forEach((it, i) => {
    replacements[`id${i}`] = String(it.id);
    replacements[`item${i}`] = JSON.stringify(it);
  });
  // one statement: the rows take their `seq` in the order of the VALUES list
  await db().query(`INSERT INTO conversation_items (org_id, conversation_id, id, item) VALUES ${values} ON CONFLICT DO NOTHING`, { replacements, transaction });
}

/** Creates a conversation with its first items (one transaction). */
export async function createConversation(c: NewConversation, items: Json[]): Promise<ConversationRow> {
  return db().transaction(async (transaction) => {
    const [row] = await db().query<ConversationRow>(
      `INSERT INTO conversations (org_id, id, project_id, api_key_id, metadata) VALUES (:orgId, :id, :projectId, :apiKeyId, :metadata::jsonb)
       RETURNING id, metadata, created_at`,
      { replacements: { ...c, metadata: JSON.stringify(c.metadata) }, type: QueryTypes.SELECT, transaction },
    );
    await insertItems(c.orgId, c.id, items, transaction);
    return row;
  });
}

/** The scope's conversation (store-scope.ts), or undefined. */
export async function findConversation(scope: StoreScope, id: string): Promise<ConversationRow | undefined> {
  const rows = await db().query<ConversationRow>(`SELECT id, metadata, created_at FROM conversations WHERE ${scopeSql(scope)} AND id = :id`, {
    replacements: Object.assign(scopeValues(scope), { id }),
    type: QueryTypes.SELECT,
  });
  return rows[0];
}

/** Replaces a conversation's metadata; undefined when the scope has no such conversation. */
export async function updateConversationMetadata(scope: StoreScope, id: string, metadata: Record<string, string>): Promise<ConversationRow | undefined> {
  const rows = await db().query<ConversationRow>(`UPDATE conversations SET metadata = :metadata::jsonb WHERE ${scopeSql(scope)} AND id = :id RETURNING id, metadata, created_at`, {
    replacements: Object.assign(scopeValues(scope), { id, metadata: JSON.stringify(metadata) }),
    type: QueryTypes.SELECT,
  });
  return rows[0];
}

/** Deletes a conversation and its items; false when the scope has no such conversation. */
export async function deleteConversation(scope: StoreScope, id: string): Promise<boolean> {
  const rows = await db().query<{ id: string }>(`DELETE FROM conversations WHERE ${scopeSql(scope)} AND id = :id RETURNING id`, { replacements: Object.assign(scopeValues(scope), { id }), type: QueryTypes.SELECT });
  return rows.length > 0;
}

/**
 * Adds items to an existing conversation; false when the scope has no such conversation. The
 * conversation's row is locked for the insert, so that items added at once by two requests (two
 * responses of one conversation) each stay together.
 */
export async function addConversationItems(scope: StoreScope, id: string, items: Json[]): Promise<boolean> {
  return db().transaction(async (transaction) => {
    const found = await db().query(`SELECT 1 FROM conversations WHERE ${scopeSql(scope)} AND id = :id FOR UPDATE`, { replacements: Object.assign(scopeValues(scope), { id }), type: QueryTypes.SELECT, transaction });
    if (!found.length) return false;
    await insertItems(scope.orgId, id, items, transaction);
    return true;
  });
}

/** Every item of a conversation, oldest first (a response's history). */
export async function allConversationItems(orgId: string, id: string): Promise<Json[]> {
  const rows = await db().query<{ item: Json }>('SELECT item FROM conversation_items WHERE org_id = :orgId AND conversation_id = :id ORDER BY seq', {
    replacements: { orgId, id },
    type: QueryTypes.SELECT,
  });
  return rows.map((r) => r.item);
}

export interface ItemPage {
  order: 'asc' | 'desc';
  after?: string;
  limit: number;
}

/** A page of a conversation's items in `order`, those after the item `after` (none when it is not one of them). */
export async function listConversationItems(orgId: string, id: string, q: ItemPage): Promise<{ items: Json[]; hasMore: boolean }> {
  const desc = q.order === 'desc';
  const after =
    q.after === undefined
      ? ''
      : ` AND seq ${desc ? '<' : '>'} COALESCE((SELECT seq FROM conversation_items WHERE org_id = :orgId AND conversation_id = :id AND id = :after), ${desc ? '0' : "'9223372036854775807'::bigint"})`;
  const rows = await db().query<{ item: Json }>(
    `SELECT item FROM conversation_items WHERE org_id = :orgId AND conversation_id = :id${after} ORDER BY seq ${desc ? 'DESC' : 'ASC'} LIMIT :take`,
    { replacements: { orgId, id, after: q.after, take: q.limit + 1 }, type: QueryTypes.SELECT },
  );
  return { items: rows.slice(0, q.limit).map((r) => r.item), hasMore: rows.length > q.limit };
}

/** Which of `itemIds` the conversation already holds (one query). */
export async function heldItemIds(orgId: string, id: string, itemIds: string[]): Promise<string[]> {
  if (!itemIds.length) return [];
  const rows = await db().query<{ id: string }>('SELECT id FROM conversation_items WHERE org_id = :orgId AND conversation_id = :id AND id IN (:itemIds)', {
    replacements: { orgId, id, itemIds },
    type: QueryTypes.SELECT,
  });
  return rows.map((r) => r.id);
}

export async function findConversationItem(orgId: string, id: string, itemId: string): Promise<Json | undefined> {
  const rows = await db().query<{ item: Json }>('SELECT item FROM conversation_items WHERE org_id = :orgId AND conversation_id = :id AND id = :itemId', {
    replacements: { orgId, id, itemId },
    type: QueryTypes.SELECT,
  });
  return rows[0]?.item;
}

export async function deleteConversationItem(orgId: string, id: string, itemId: string): Promise<boolean> {
  const rows = await db().query<{ id: string }>('DELETE FROM conversation_items WHERE org_id = :orgId AND conversation_id = :id AND id = :itemId RETURNING id', {
    replacements: { orgId, id, itemId },
    type: QueryTypes.SELECT,
  });
  return rows.length > 0;
}
