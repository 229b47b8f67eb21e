import { QueryInterface, QueryTypes } from 'sequelize';

/**
 * Emails are compared case-insensitively everywhere (sign-in, invitations, `emailTakenBy`), but the
 * only unique index was on the email as typed: two creates racing (`POST /admin/v1/users` with
 * `Bob@x.io` and `bob@x.io` at once, or one and an invitation's redemption) both passed the check and
 * both were stored, leaving sign-in to pick one of two accounts. The index on `lower(email)` makes the
 * second insert fail (deleted users included, as the check counts them). Emails already held twice
 * stop the migration with their list: an operator merges or renames them first.
 */
export async function up(q: QueryInterface): Promise<void> {
  const taken = await q.sequelize.query<{ email: string; n: number }>(
    'SELECT lower(email) AS email, count(*)::int AS n FROM users GROUP BY lower(email) HAVING count(*) > 1 ORDER BY 1 LIMIT 20',
    { type: QueryTypes.SELECT },
  );
  if (taken.length) {
    throw new Error(`Users share an email in different letter case (${taken.map((t) => `${t.email} x${t.n}`).join(', ')}): rename or delete all but one of each, then migrate again.`);
  }
  await q.sequelize.query('CREATE UNIQUE INDEX users_email_lower_unique ON users (lower(email))');
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('DROP INDEX IF EXISTS users_email_lower_unique');
}
