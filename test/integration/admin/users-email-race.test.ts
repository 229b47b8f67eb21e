import { expect } from 'chai';
import crypto from 'crypto';
import { col, fn, where } from 'sequelize';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { waitFor } from '../../helpers/wait';
import { db } from '../../../shared/db/sequelize';
import { User } from '../../../shared/db/models';

/**
 * Emails are compared case-insensitively, and the check that refuses a taken one runs before the
 * insert: two creates at once, in different letter case, both passed it. The test holds inserts
 * into `users` (a SHARE lock lets the checks read, not the inserts write) until both creates have
 * checked, so they meet at the insert: the unique index on lower(email) refuses the second
 * (without it both were stored, two accounts for one sign-in email).
 */
describe('management API: two creates of one email in different letter case at once', function () {
  this.timeout(30_000);
  it('one user is created, the other answers 409 already_exists', async () => {
    const admin = await startAdmin();
    const key = (await buildPlatformKey(['users:write'])).key;
    const email = `race-${crypto.randomBytes(4).toString('hex')}@example.com`;
    const lock = await db().transaction();
    try {
      await db().query('LOCK TABLE users IN SHARE MODE', { transaction: lock });
      const sent = [email, email.toUpperCase()].map((e) => adminCall(admin.url, key, 'POST', '/admin/v1/users', { email: e }));
      const blocked = await waitFor(async () => {
        const [rows] = await db().query("SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE NOT l.granted AND c.relname = 'users'");
        return (rows as Array<{ n: number }>)[0].n === 2;
      }, 10_000);
      expect(blocked, 'both creates checked the email and wait to insert').to.equal(true);
      await lock.commit();
      const replies = await Promise.all(sent);
      expect(replies.map((r) => r.status).sort()).to.deep.equal([201, 409]);
      const refused = replies.find((r) => r.status === 409)!;
      expect(refused.body.error).to.deep.include({ code: 'already_exists', message: 'A record with the same email (compared case-insensitively) already exists.' });
      expect(await User.count({ where: where(fn('lower', col('email')), email) as never })).to.equal(1);
    } finally {
      await lock.rollback().catch(() => undefined);
      await admin.close();
    }
  });
});
