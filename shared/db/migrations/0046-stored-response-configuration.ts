import { QueryInterface } from 'sequelize';

/**
 * A stored response keeps the settings the `configuration_update` input items of its history and its
 * input left in effect (the reasoning effort, the text format: `{effort?, format?}`), so that a
 * response that continues it with `previous_response_id` is made with them (its stored conversation
 * is canonical messages, which carry no such item). Null: no update set anything (and rows stored
 * before this migration).
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE stored_responses ADD COLUMN configuration jsonb');
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE stored_responses DROP COLUMN configuration');
}
