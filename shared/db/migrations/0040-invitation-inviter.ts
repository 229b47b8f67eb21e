import { QueryInterface } from 'sequelize';

/**
 * Who made an organization invitation on the dashboard (`invited_by`): when they stop being an owner
 * of the org (demoted or removed), the open invitations they made into it are revoked, so a departing
 * owner cannot keep a way back in (docs/security.md). Null for operators' invitations and older rows.
 * When it was mailed to the invitee (`mailed_at`): the members page then never shows its link, so
 * only the mailbox redeems it (an owner cannot claim someone else's email with it).
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`
    ALTER TABLE invite_codes ADD COLUMN invited_by uuid REFERENCES users(id) ON DELETE SET NULL, ADD COLUMN mailed_at timestamptz;
    CREATE INDEX IF NOT EXISTS invite_codes_org_inviter ON invite_codes (org_id, invited_by) WHERE invited_by IS NOT NULL;`);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('DROP INDEX IF EXISTS invite_codes_org_inviter; ALTER TABLE invite_codes DROP COLUMN invited_by, DROP COLUMN mailed_at;');
}
