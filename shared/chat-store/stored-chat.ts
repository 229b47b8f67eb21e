import { QueryTypes } from 'sequelize';
import { db } from '../db/sequelize';
import { storedResponsesCutoff } from '../responses/retention';
import { scopeSql, scopeValues, type StoreScope } from '../tenancy/store-scope';

/** A chat completion stored with `store: true`, as its org reads it back. */
export interface StoredChat {
  id: string;
  metadata: Record<string, string>;
  completion: Record<string, unknown>;
  messages: Array<Record<string, unknown>>;
}

export interface StoreChatRow {
  orgId: string;
  projectId: string | null;
  apiKeyId: string | null;
  model: string;
  metadata: Record<string, string>;
  completion: Record<string, unknown>;
  messages: unknown[];
}

/** The retention's condition on `created_at` (STORED_RESPONSES_RETENTION_DAYS; none when 0). */
function retention(): { sql: string; cutoff?: Date } {
  const cutoff = storedResponsesCutoff();
  return cutoff ? { sql: ' AND created_at > :cutoff', cutoff } : { sql: '' };
}

/** Stores a completion; an id the org already stored (an upstream reusing one) keeps the first. */
export async function insertStoredChat(row: StoreChatRow): Promise<void> {
  await db().query(
    `INSERT INTO stored_chat_completions (org_id, id, project_id, api_key_id, model, metadata, completion, messages)
     VALUES (:orgId, :id, :projectId, :apiKeyId, :model, :metadata::jsonb, :completion::jsonb, :messages::jsonb)
     ON CONFLICT (org_id, id) DO NOTHING`,
    {
      replacements: {
        orgId: row.orgId,
        id: String(row.completion.id),
        projectId: row.projectId,
        apiKeyId: row.apiKeyId,
        model: row.model,
        metadata: JSON.stringify(row.metadata),
        completion: JSON.stringify(row.completion),
        messages: JSON.stringify(row.messages),
      },
    },
  );
}

/** One of the scope's stored completions within the retention, or undefined. */
export async function findStoredChat(scope: StoreScope, id: string): Promise<StoredChat | undefined> {
  const r = retention();
  const rows = await db().query<StoredChat>(
    `SELECT id, metadata, completion, messages FROM stored_chat_completions WHERE ${scopeSql(scope)} AND id = :id${r.sql}`,
    { replacements: Object.assign(scopeValues(scope), { id, cutoff: r.cutoff }), type: QueryTypes.SELECT },
  );
  return rows[0];
}

export interface ChatListQuery {
  model?: string;
  metadata: Record<string, string>;
  after?: string;
  limit: number;
  order: 'asc' | 'desc';
}

/**
 * A page of the scope's stored completions in creation order (`order`), those after the completion
 * `after` (none when that id is not the org's), `limit` of them and whether more follow. `model` and
 * every `metadata` pair must match.
 */
export async function listStoredChats(scope: StoreScope, q: ChatListQuery): Promise<{ rows: StoredChat[]; hasMore: boolean }> {
  const r = retention();
  const desc = q.order === 'desc';
  const where = [`${scopeSql(scope)}${r.sql}`];
  if (q.model !== undefined) where.push('model = :model');
  if (Object.keys(q.metadata).length) where.push('metadata @> :metadata::jsonb');
  if (q.after !== undefined) {
    where.push(`seq ${desc ? '<' : '>'} COALESCE((SELECT seq FROM stored_chat_completions WHERE ${scopeSql(scope)} AND id = :after), ${desc ? '0' : "'9223372036854775807'::bigint"})`);
  }
  const rows = await db().query<StoredChat>(
    `SELECT id, metadata, completion, messages FROM stored_chat_completions WHERE ${where.join(' AND ')}
     ORDER BY seq ${desc ? 'DESC' : 'ASC'} LIMIT :take`,
    { replacements: Object.assign(scopeValues(scope), { model: q.model, metadata: JSON.stringify(q.metadata), after: q.after, take: q.limit + 1, cutoff: r.cutoff }), type: QueryTypes.SELECT },
  );
  return { rows: rows.slice(0, q.limit), hasMore: rows.length > q.limit };
}

/** Replaces a stored completion's metadata; false when the scope has no such completion. */
export async function updateStoredChatMetadata(scope: StoreScope, id: string, metadata: Record<string, string>): Promise<boolean> {
  const r = retention();
  const [, count] = (await db().query(
    `UPDATE stored_chat_completions SET metadata = :metadata::jsonb WHERE ${scopeSql(scope)} AND id = :id${r.sql}`,
    { replacements: Object.assign(scopeValues(scope), { id, metadata: JSON.stringify(metadata), cutoff: r.cutoff }), type: QueryTypes.UPDATE },
  )) as unknown as [unknown, number];
  return count > 0;
}

/** Deletes a stored completion; false when the scope has no such completion. */
export async function deleteStoredChat(scope: StoreScope, id: string): Promise<boolean> {
  const r = retention();
  const rows = await db().query<{ id: string }>(
    `DELETE FROM stored_chat_completions WHERE ${scopeSql(scope)} AND id = :id${r.sql} RETURNING id`,
    { replacements: Object.assign(scopeValues(scope), { id, cutoff: r.cutoff }), type: QueryTypes.SELECT },
  );
  return rows.length > 0;
}
