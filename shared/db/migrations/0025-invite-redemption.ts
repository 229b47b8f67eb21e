import { QueryInterface } from 'sequelize';

/**
 * Redeemable invitations (issue 31): an invite code into an organization names the role it gives and,
 * optionally, the one email address that may redeem it.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`ALTER TABLE invite_codes ADD COLUMN email varchar(320), ADD COLUMN role varchar(16) NOT NULL DEFAULT 'member';`);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE invite_codes DROP COLUMN email, DROP COLUMN role;');
}
