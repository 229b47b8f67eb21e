import { QueryTypes } from 'sequelize';
import { db } from '../db/sequelize';
import { scopeSql, scopeValues, type StoreScope } from '../tenancy/store-scope';
import { storedResponsesCutoff } from './retention';

type Json = Record<string, unknown>;

/** The ids of a stored response's items, as migration 0045's GIN index `stored_responses_item_ids` has them (the same expression, so the index serves it). */
export const ITEM_IDS_SQL = `(jsonb_path_query_array(response, '$.output[*].id') || jsonb_path_query_array(input_items, '$[*].id'))`;

/**
 * The statement finding the items named by `:ids` among the output and input items of the scope's
 * stored responses within the retention (store-scope.ts: another org's or project's are not found),
 * the newest response's when an id is in several (an item sent again with its id): through the GIN
 * index of migration 0045; `OFFSET 0` keeps the planner from reading the org's rows newest first instead.
 */
export function storedItemsSql(scope: StoreScope, withCutoff: boolean): string {
  return `SELECT DISTINCT ON (e.item->>'id') e.item
       FROM (SELECT created_at, response, input_items FROM stored_responses
              WHERE ${scopeSql(scope)} AND ${ITEM_IDS_SQL} ?| ARRAY[:ids]::text[]${withCutoff ? ' AND created_at > :cutoff' : ''}
             OFFSET 0) r,
            LATERAL jsonb_array_elements(COALESCE(r.response->'output', '[]'::jsonb) || r.input_items) AS e(item)
      WHERE e.item->>'id' IN (:ids)
      ORDER BY e.item->>'id', r.created_at DESC`;
}

async function fromStoredResponses(scope: StoreScope, ids: string[]): Promise<Map<string, Json>> {
  const cutoff = storedResponsesCutoff();
  const rows = await db().query<{ item: Json }>(storedItemsSql(scope, cutoff !== null), {
    replacements: Object.assign(scopeValues(scope), { ids, cutoff }),
    type: QueryTypes.SELECT,
  });
  return new Map(rows.map((r) => [String(r.item.id), r.item]));
}

/** The statement finding the items named by `:ids` among the items of the scope's conversations (the latest added when an id is in several), through `conversation_items_item_id`. */
export function conversationItemsSql(scope: StoreScope): string {
  return `SELECT DISTINCT ON (ci.id) ci.item FROM conversation_items ci
      WHERE ci.org_id = :orgId AND ci.id IN (:ids)
        AND EXISTS (SELECT 1 FROM conversations WHERE conversations.org_id = ci.org_id AND conversations.id = ci.conversation_id AND ${scopeSql(scope)})
      ORDER BY ci.id, ci.seq DESC`;
}

async function fromConversations(scope: StoreScope, ids: string[]): Promise<Map<string, Json>> {
  const rows = await db().query<{ item: Json }>(conversationItemsSql(scope), { replacements: Object.assign(scopeValues(scope), { ids }), type: QueryTypes.SELECT });
  return new Map(rows.map((r) => [String(r.item.id), r.item]));
}

/**
 * The stored items an `item_reference` may name, by id: an output or input item of a stored response
 * of the scope, else an item of one of its conversations. Ids found nowhere are absent from the map.
 */
export async function findReferencedItems(scope: StoreScope, ids: string[]): Promise<Map<string, Json>> {
  const wanted = [...new Set(ids)];
  if (!wanted.length) return new Map();
  const found = await fromStoredResponses(scope, wanted);
  const rest = wanted.filter((id) => !found.has(id));
  if (rest.length) for (const [id, item] of await fromConversations(scope, rest)) found.set(id, item);
  return found;
}
