import { QueryInterface } from 'sequelize';

/**
 * What an owner set on a member outlives the member's removal (docs/keys.md "Member limits", "Removed
 * and added back"): the membership row goes when a member is removed, and with it their limits, their
 * web search cap and switch; a member added back (an invitation redeemed, `gateway member add`) had
 * none, and a new key of theirs ran unlimited. The removal now keeps them here, one row per org and
 * user, and adding the user back to the org takes them again (and drops the row).
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`
    CREATE TABLE IF NOT EXISTS kept_member_limits (
      org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      search_cap integer,
      search_enabled boolean NOT NULL DEFAULT true,
      allowed_models jsonb,
      rpm integer CHECK (rpm > 0),
      tpm integer CHECK (tpm > 0),
      budget_micros bigint CHECK (budget_micros >= 0),
      budget_period text CHECK (budget_period IN ('day', 'month', 'total')),
      removed_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (org_id, user_id)
    );`);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('DROP TABLE IF EXISTS kept_member_limits;');
}
