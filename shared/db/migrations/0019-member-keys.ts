import { QueryInterface } from 'sequelize';

/**
 * Every key belongs to someone (issue 27). Before, `POST /dashboard/o/{org}/keys` made keys of no
 * user, so a member's own controls did not apply to keys they made there. The dashboard audited each
 * creation (actor = the signed-in user, target = the key), so those keys can be told apart:
 * an org-wide key made on the dashboard by a user who is not an owner of its org today becomes that
 * user's key. Their search switch, cap and tool policy apply from now on, and if they have left the
 * org (or were deleted) the key stops working. Keys made by today's owners, by the CLI or by the
 * seed stay org-wide. Runs again harmlessly (only keys of no user are touched).
 */
export const ADOPT_MEMBER_KEYS = `
UPDATE api_keys k SET user_id = a.actor_id, updated_at = now()
FROM audit_logs a
WHERE k.user_id IS NULL
  AND a.target_id = k.id::text
  AND a.actor_type = 'web_session' AND a.actor_id IS NOT NULL
  AND a.method = 'POST' AND a.status = 201 AND a.path LIKE '/dashboard/o/%/keys'
  AND EXISTS (SELECT 1 FROM users u WHERE u.id = a.actor_id)
  AND NOT EXISTS (SELECT 1 FROM memberships m WHERE m.org_id = k.org_id AND m.user_id = a.actor_id AND m.role = 'owner')`;

/**
 * A member's key must never outlive its user as an org-wide key: the foreign key set `user_id` to
 * NULL when a user row was deleted (the product soft-deletes users, but a row removed by hand would
 * have turned the member's keys into org-wide ones). Now the keys go with the user.
 */
const userKeysCascade = (onDelete: 'CASCADE' | 'SET NULL') => `
ALTER TABLE api_keys DROP CONSTRAINT IF EXISTS api_keys_user_id_fkey;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_user_id_fkey FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE ${onDelete}`;

export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(ADOPT_MEMBER_KEYS);
  await q.sequelize.query(userKeysCascade('CASCADE'));
}

/** Which keys were adopted is not recorded: going down leaves them with their member. */
export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query(userKeysCascade('SET NULL'));
}
