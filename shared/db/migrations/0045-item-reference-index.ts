import { QueryInterface } from 'sequelize';

/**
 * What an `item_reference` input item of the responses dialect is looked up by (its item id:
 * shared/responses/item-lookup.ts), without reading a whole table on the request path:
 * - `stored_responses_item_ids`: a GIN index over the ids of each stored response's output items and
 *   input items (an expression over the jsonb columns, so a row is indexed as it is inserted or
 *   updated, a background response's output when it ends included, and the rows stored before this
 *   migration are indexed when it runs: their items are found too; rows from before 0031 have no
 *   input items, only their output's ids).
 * - `conversation_items_item_id`: a conversation's item by its id alone within the org (the primary
 *   key leads with the conversation).
 * Both are built CONCURRENTLY (stored responses keep being written during a rolling deploy); a build
 * that failed left an invalid index, which is dropped and built again.
 */
const INDEXES: Array<[string, string]> = [
  [
    'stored_responses_item_ids',
    `ON stored_responses USING gin ((jsonb_path_query_array(response, '$.output[*].id') || jsonb_path_query_array(input_items, '$[*].id')))`,
  ],
  ['conversation_items_item_id', 'ON conversation_items (org_id, id)'],
];

export async function up(q: QueryInterface): Promise<void> {
  for (const [name, def] of INDEXES) {
    const [rows] = (await q.sequelize.query(`SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass('${name}')`)) as [Array<{ valid: boolean }>, unknown];
    if (rows.length && !rows[0].valid) await q.sequelize.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
    await q.sequelize.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${name} ${def}`);
  }
}

export async function down(q: QueryInterface): Promise<void> {
  for (const [name] of INDEXES) await q.sequelize.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
}
