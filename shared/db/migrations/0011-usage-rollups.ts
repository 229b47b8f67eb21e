import { QueryInterface } from 'sequelize';

/**
 * Daily usage rollups, derived from the append-only `usage_events` ledger by the clock: one row per
 * (UTC day, org, model, modality, passthrough). `usage_rollup_days` records when each day was last
 * recomputed; a day is read from rollups only once it was recomputed after it ended (see
 * shared/metering/rollups.ts). The created_at index serves the per-day recompute and the current-day reads.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`
    CREATE TABLE usage_rollups (
      day date NOT NULL,
      org_id uuid NOT NULL,
      model varchar(255) NOT NULL,
      modality varchar(255) NOT NULL,
      passthrough boolean NOT NULL,
      requests bigint NOT NULL,
      input_tokens bigint NOT NULL,
      output_tokens bigint NOT NULL,
      units jsonb NOT NULL DEFAULT '{}',
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (day, org_id, model, modality, passthrough)
    )`);
  await q.sequelize.query('CREATE INDEX usage_rollups_org_day ON usage_rollups (org_id, day)');
  await q.sequelize.query('CREATE TABLE usage_rollup_days (day date PRIMARY KEY, rolled_up_at timestamptz NOT NULL)');
  await q.sequelize.query('CREATE INDEX usage_events_created_at ON usage_events (created_at)');
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('DROP INDEX IF EXISTS usage_events_created_at');
  await q.dropTable('usage_rollup_days');
  await q.dropTable('usage_rollups');
}
