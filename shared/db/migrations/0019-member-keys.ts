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

export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(ADOPT_MEMBER_KEYS);
}

/** Which keys were adopted is not recorded: going down leaves them with their member. */
export async function down(): Promise<void> {}
