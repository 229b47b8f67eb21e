import { QueryInterface } from 'sequelize';

/**
 * Controls per key (issue 31): allowed models, rate limits, a spending limit, an expiry, and who made
 * it and when it was last used. Projects get a spending limit too. Money is in micro-dollars like
 * every price; a null limit is no limit.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`
    ALTER TABLE api_keys
      ADD COLUMN allowed_models jsonb,
      ADD COLUMN rpm integer CHECK (rpm > 0),
      ADD COLUMN tpm integer CHECK (tpm > 0),
      ADD COLUMN budget_micros bigint CHECK (budget_micros >= 0),
      ADD COLUMN budget_period text CHECK (budget_period IN ('day', 'month', 'total')),
      ADD COLUMN expires_at timestamptz,
      ADD COLUMN last_used_at timestamptz,
      ADD COLUMN created_by uuid REFERENCES users(id) ON DELETE SET NULL;
    ALTER TABLE projects
      ADD COLUMN budget_micros bigint CHECK (budget_micros >= 0),
      ADD COLUMN budget_period text CHECK (budget_period IN ('day', 'month', 'total'));
    CREATE INDEX IF NOT EXISTS usage_events_api_key_created ON usage_events (api_key_id, created_at);
    CREATE INDEX IF NOT EXISTS usage_events_project_created ON usage_events (project_id, created_at);`);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`
    DROP INDEX IF EXISTS usage_events_api_key_created;
    DROP INDEX IF EXISTS usage_events_project_created;
    ALTER TABLE projects DROP COLUMN budget_micros, DROP COLUMN budget_period;
    ALTER TABLE api_keys DROP COLUMN allowed_models, DROP COLUMN rpm, DROP COLUMN tpm, DROP COLUMN budget_micros,
      DROP COLUMN budget_period, DROP COLUMN expires_at, DROP COLUMN last_used_at, DROP COLUMN created_by;`);
}
