import { QueryInterface } from 'sequelize';

/**
 * The web interfaces (issue 18): a user's password hash (scrypt, shared/web/passwords.ts; null until
 * set by an invite or reset link or `gateway user set-password`) and archived projects (kept for
 * their usage history, refused for new requests).
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE users ADD COLUMN password_hash text');
  await q.sequelize.query('ALTER TABLE projects ADD COLUMN archived_at timestamptz');
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE projects DROP COLUMN archived_at');
  await q.sequelize.query('ALTER TABLE users DROP COLUMN password_hash');
}
