import { QueryInterface } from 'sequelize';

/** Provider kinds beyond openai/anthropic/cohere (issue 30) keep their non-secret fields here: api_version, region, preset. */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query("ALTER TABLE providers ADD COLUMN settings jsonb NOT NULL DEFAULT '{}'::jsonb");
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE providers DROP COLUMN settings');
}
