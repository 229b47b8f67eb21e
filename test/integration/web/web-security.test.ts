import { expect } from 'chai';
import crypto from 'crypto';
import { env, resetSim } from '../../helpers/harness';
import { startAdmin } from '../../helpers/admin';
import { buildOrg } from '../../helpers/factories';
import { buildOperator, buildWebMember, consoleAs, dashboardAs, WebClient, WEB_PASSWORD } from '../../helpers/web-client';
import { Membership, User } from '../../../shared/db/models';
import { createInvitation } from '../../../shared/tenancy/invitations';
import { createPasswordLink } from '../../../shared/web/password-links';
import { createImpersonationTicket } from '../../../shared/web/impersonation';
import { setPassword, verifyPassword } from '../../../shared/web/passwords';
import { config } from '../../../shared/config/env';

/** A loopback address of its own: the sign-in limiters count per client address. */
const ownAddress = () => `127.0.${1 + crypto.randomInt(200)}.${2 + crypto.randomInt(250)}`;

describe('web pages and sessions: secrets never cached, sessions end with their password or their admin, invitation guesses counted on the account', () => {
  beforeEach(resetSim);

  it('every page is Cache-Control: no-store, above all those that show a secret once (new and rotated keys, invitation links, a new platform key)', async () => {
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    const web = await dashboardAs(owner);
    const keys = `/dashboard/o/${o.org.slug}/keys`;
    const list = await web.get(keys);
    expect(list.status).to.equal(200);
    expect(list.headers['cache-control']).to.equal('no-store');
    const created = await web.post(keys, { name: 'shown once' });
    expect(created.status).to.equal(201);
    expect(created.text).to.contain('data-test="new-key"');
    expect(created.headers['cache-control'], 'the page holding a new secret').to.equal('no-store');
    const rotated = await web.post(`${keys}/${o.keyId}/rotate`, { grace_seconds: '0' });
    expect(rotated.status).to.equal(200);
    expect(rotated.text).to.contain('data-test="new-key"');
    expect(rotated.headers['cache-control']).to.equal('no-store');
    const invited = await web.post(`/dashboard/o/${o.org.slug}/members/invitations`, { email: `c-${crypto.randomBytes(4).toString('hex')}@example.com`, role: 'owner' });
    expect(invited.status).to.equal(201);
    expect(invited.headers['cache-control']).to.equal('no-store');
    expect((await web.get(`/dashboard/o/${o.org.slug}/members`)).headers['cache-control']).to.equal('no-store');
    expect((await new WebClient(env().gw.url).get('/dashboard/sign-in')).headers['cache-control']).to.equal('no-store');
    // the stylesheet stays cacheable
    expect((await web.get('/dashboard/assets/style.css')).headers['cache-control']).to.equal('public, max-age=3600');

    const admin = await startAdmin();
    try {
      const op = await consoleAs(admin.url);
      await op.get('/keys');
      const pk = await op.post('/keys', { name: 'shown once', scopes: 'stats:read' });
      expect(pk.status).to.equal(201);
      expect(pk.text).to.contain('data-test="new-platform-key"');
      expect(pk.headers['cache-control']).to.equal('no-store');
    } finally {
      await admin.close();
    }
  });

  it("a new password ends the user's other sessions (dashboard and console); the session that set it stays signed in", async () => {
    const o = await buildOrg(env().redis);
    const user = await buildWebMember(o.org.id, 'member');
    const stolen = await dashboardAs(user);
    const home = `/dashboard/o/${o.org.slug}`;
    expect((await stolen.get(home)).status).to.equal(200);

    // the user resets their password with a link: the other browser is signed out
    const token = await createPasswordLink(env().redis, user.id, 'reset');
    const mine = new WebClient(env().gw.url);
    await mine.get(`/dashboard/password/${token}`);
    const set = await mine.post(`/dashboard/password/${token}`, { password: 'a brand new password' });
    expect(set.status).to.equal(303);
    expect((await mine.get(home)).status, 'the session that set the password').to.equal(200);
    const after = await stolen.get(home);
    expect(after.status).to.equal(303);
    expect(after.headers.location).to.equal('/dashboard/sign-in');

    // a password set another way (the CLI's set-password uses the same function) does the same
    await setPassword((await User.findByPk(user.id))!, WEB_PASSWORD);
    expect((await mine.get(home)).status).to.equal(303);

    const admin = await startAdmin();
    try {
      const op = await buildOperator();
      const c = new WebClient(admin.url);
      expect((await c.signIn('/sign-in', op.email, WEB_PASSWORD)).status).to.equal(303);
      expect((await c.get('/keys')).status).to.equal(200);
      await setPassword(op, 'the operator changed it');
      const gone = await c.get('/keys');
      expect(gone.status).to.equal(303);
      expect(gone.headers.location).to.equal('/sign-in');
    } finally {
      await admin.close();
    }
  });

  it('an impersonation session ends as soon as its admin is no longer a live platform admin (demoted or deleted)', async () => {
    const o = await buildOrg(env().redis);
    const user = await buildWebMember(o.org.id, 'owner');
    const home = `/dashboard/o/${o.org.slug}`;
    for (const end of ['demote', 'delete'] as const) {
      const op = await buildOperator();
      const ticket = await createImpersonationTicket(env().redis, { userId: user.id, adminId: op.id, adminEmail: op.email });
      const web = new WebClient(env().gw.url);
      expect((await web.get(`/dashboard/impersonate?ticket=${encodeURIComponent(ticket)}`)).status).to.equal(303);
      const open = await web.get(home);
      expect(open.status).to.equal(200);
      expect(open.text).to.contain('data-test="impersonation-banner"');
      await (end === 'demote' ? op.update({ isPlatformAdmin: false }) : op.update({ deletedAt: new Date() }));
      const after = await web.get(home);
      expect(after.status, end).to.equal(303);
      expect(after.headers.location).to.equal('/dashboard/sign-in');
    }
    // the user's own session is not affected
    expect((await (await dashboardAs(user)).get(home)).status).to.equal(200);
  });

  it("an invitation naming an existing account: wrong passwords count against that account's (address, email) limit whatever email is typed", async () => {
    const victim = await buildWebMember((await buildOrg(env().redis)).org.id, 'member');
    const o = await buildOrg(env().redis);
    const invite = await createInvitation(o.org.id, victim.email, 'member');
    const address = ownAddress();
    const web = new WebClient(env().gw.url, address);
    await web.get(`/dashboard/invite/${invite.code}`);
    const limit = config().webSignInMaxAttempts;
    expect(limit).to.be.below(config().webSignInMaxPerAddress); // else the address's ceiling answers first
    const statuses: number[] = [];
    // the email field is readonly on the page; a forged form types another one each time
    for (let i = 0; i < limit + 1; i++) {
      statuses.push((await web.post(`/dashboard/invite/${invite.code}`, { email: `other-${i}@example.com`, password: `guess-${i}-guess-guess` })).status);
    }
    expect(statuses).to.deep.equal([...Array(limit).fill(400), 429]);
    const right = await web.post(`/dashboard/invite/${invite.code}`, { email: `other-x@example.com`, password: WEB_PASSWORD });
    expect(right.status, 'the right password is not checked past the limit').to.equal(429);
    expect(await Membership.count({ where: { orgId: o.org.id, userId: victim.id } })).to.equal(0);
    // the same counter as the sign-in page's for that account and address
    const signIn = await new WebClient(env().gw.url, address).signIn('/dashboard/sign-in', victim.email, WEB_PASSWORD);
    expect(signIn.status).to.equal(429);
  });
  it('a password link used twice at once sets one password: the other submission is 404 invalid_password_link; a weak password leaves it usable', async () => {
    const o = await buildOrg(env().redis);
    const user = await buildWebMember(o.org.id, 'member');
    const token = await createPasswordLink(env().redis, user.id, 'reset');
    const a = new WebClient(env().gw.url);
    const b = new WebClient(env().gw.url);
    await a.get(`/dashboard/password/${token}`);
    await b.get(`/dashboard/password/${token}`);
    const weak = await a.post(`/dashboard/password/${token}`, { password: 'short' });
    expect(weak.status, 'a weak password: the form again').to.equal(400);
    const [ra, rb] = await Promise.all([a.post(`/dashboard/password/${token}`, { password: 'password number one' }), b.post(`/dashboard/password/${token}`, { password: 'password number two' })]);
    expect([ra.status, rb.status].sort()).to.deep.equal([303, 404]);
    const winner = ra.status === 303 ? 'password number one' : 'password number two';
    const loser = ra.status === 303 ? 'password number two' : 'password number one';
    const stored = (await User.findByPk(user.id))!;
    expect(await verifyPassword(winner, stored.passwordHash)).to.equal(true);
    expect(await verifyPassword(loser, stored.passwordHash)).to.equal(false);
  });
});
