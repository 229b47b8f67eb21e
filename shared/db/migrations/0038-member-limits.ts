import { QueryInterface } from 'sequelize';

/**
 * Member limits (docs/keys.md "Member limits"): an owner's allowed models, rate limits and spending
 * limit on a member of an org, applied to every key the member owns there on top of the key's own.
 * The same columns and checks as a key's controls (0023); a null limit is no limit. The index serves
 * seeding a member's budget from the ledger (their keys in the org).
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`
    ALTER TABLE memberships
      ADD COLUMN allowed_models jsonb,
      ADD COLUMN rpm integer CHECK (rpm > 0),
      ADD COLUMN tpm integer CHECK (tpm > 0),
      ADD COLUMN budget_micros bigint CHECK (budget_micros >= 0),
      ADD COLUMN budget_period text CHECK (budget_period IN ('day', 'month', 'total'));
    CREATE INDEX IF NOT EXISTS api_keys_org_user ON api_keys (org_id, user_id);`);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`
    DROP INDEX IF EXISTS api_keys_org_user;
    ALTER TABLE memberships DROP COLUMN allowed_models, DROP COLUMN rpm, DROP COLUMN tpm, DROP COLUMN budget_micros, DROP COLUMN budget_period;`);
}
