import { QueryInterface } from 'sequelize';

/**
 * The input items of a stored response, as `GET /v1/responses/{id}/input_items` lists them
 * (docs/dialects.md): the request's `input`, each item with an id. Rows stored before this
 * migration have none (`[]`).
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`ALTER TABLE stored_responses ADD COLUMN input_items jsonb NOT NULL DEFAULT '[]'::jsonb`);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE stored_responses DROP COLUMN input_items');
}
