import { QueryInterface } from 'sequelize';

/**
 * Who made an organization invitation on the dashboard (`invited_by`): when they stop being an owner
 * of the org (demoted or removed), the open invitations they made into it are revoked, so a departing
 * owner cannot keep a way back in (docs/security.md). Null for operators' invitations and older rows.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`
    ALTER TABLE invite_codes ADD COLUMN invited_by uuid REFERENCES users(id) ON DELETE SET NULL;
    CREATE INDEX IF NOT EXISTS invite_codes_org_inviter ON invite_codes (org_id, invited_by) WHERE invited_by IS NOT NULL;`);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('DROP INDEX IF EXISTS invite_codes_org_inviter; ALTER TABLE invite_codes DROP COLUMN invited_by;');
}
