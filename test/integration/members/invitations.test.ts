import { expect } from 'chai';
import crypto from 'crypto';
import { env, resetSim } from '../../helpers/harness';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { buildWebMember, dashboardAs, WebClient, WEB_PASSWORD, type WebReply } from '../../helpers/web-client';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { InviteCode, Membership, User } from '../../../shared/db/models';
import { createInvitation } from '../../../shared/tenancy/invitations';
import { config } from '../../../shared/config/env';

const linkOf = (text: string) => /\/dashboard\/invite\/([A-Za-z0-9_-]+)/.exec(text)?.[1] ?? '';
const email = () => `inv-${crypto.randomBytes(5).toString('hex')}@example.com`;

/** A fresh browser that opens the invitation and submits its form; the POST's answer. */
async function redeem(code: string, form: Record<string, string>): Promise<{ web: WebClient; page: WebReply; r: WebReply }> {
  const web = new WebClient(env().gw.url);
  const page = await web.get(`/dashboard/invite/${code}`);
  const r = await web.post(`/dashboard/invite/${code}`, form);
  return { web, page, r };
}

const expectRefusedPage = (r: WebReply, status: number, words: RegExp) => {
  expect(r.status, r.text.slice(0, 300)).to.equal(status);
  expect(r.text).to.match(words);
  expect(r.text).not.to.match(/at \w+ \(|node_modules/);
};

const membersOf = async (o: TestOrg) => (await Membership.findAll({ where: { orgId: o.org.id } })).map((m) => [m.userId, m.role]);

describe('invitations: an owner invites by email, the invitee sets a password and joins with the role given', () => {
  beforeEach(resetSim);

  it('owner invites on the members page; the invitee joins once with the role; a second redemption, a bad password and a forged form are refused', async () => {
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    const web = await dashboardAs(owner);
    const b = `/dashboard/o/${o.org.slug}/members`;
    expect((await web.get(b)).status).to.equal(200);
    const invitee = email();
    const bad = await web.post(`${b}/invitations`, { email: 'not an email', role: 'member' });
    expect(bad.status).to.equal(400);
    expect(bad.text).to.include('Enter a valid email address');
    expect(await InviteCode.count({ where: { orgId: o.org.id } })).to.equal(0);

    const made = await web.post(`${b}/invitations`, { email: invitee.toUpperCase(), role: 'member' });
    expect(made.status, made.text.slice(0, 300)).to.equal(201);
    const code = linkOf(made.text);
    expect(code).to.have.length.above(10);
    expect(made.text).to.include(invitee); // the open invitations list names the email

    // a forged post (no CSRF token) changes nothing
    const forger = new WebClient(env().gw.url);
    const forged = await forger.request('POST', `/dashboard/invite/${code}`, { form: { email: invitee, password: WEB_PASSWORD }, headers: { accept: 'application/json' } });
    expect(forged.status).to.equal(403);
    expect(forged.body.error.code).to.equal('invalid_csrf_token');

    const short = await redeem(code, { email: invitee, password: 'short' });
    expect(short.page.status).to.equal(200);
    expect(short.page.text).to.include(`value="${invitee}"`).and.to.include('readonly');
    expectRefusedPage(short.r, 400, /at least 10 characters/);
    expect((await InviteCode.findOne({ where: { code } }))!.uses, 'a refused form uses nothing').to.equal(0);

    const late = new WebClient(env().gw.url); // a second browser that opened the link before it was used
    expect((await late.get(`/dashboard/invite/${code}`)).status).to.equal(200);
    const ok = await redeem(code, { email: 'someone-else@example.com', password: WEB_PASSWORD });
    expect(ok.r.status, ok.r.text.slice(0, 300)).to.equal(303);
    expect(ok.r.headers.location).to.equal(`/dashboard/o/${o.org.slug}`);
    const user = (await User.findOne({ where: { email: invitee } }))!;
    expect(user, 'the invitation binds the email, whatever was typed').to.not.equal(null);
    expect(await User.count({ where: { email: 'someone-else@example.com' } })).to.equal(0);
    expect((await Membership.findOne({ where: { orgId: o.org.id, userId: user.id } }))!.role).to.equal('member');
    expect((await ok.web.get(`/dashboard/o/${o.org.slug}/keys`)).status, 'signed in after joining').to.equal(200);
    expect((await dashboardAs(user)).csrf, 'signs in with the password chosen').to.not.equal('');

    const before = await membersOf(o);
    expectRefusedPage(await late.post(`/dashboard/invite/${code}`, { email: invitee, password: WEB_PASSWORD }), 410, /already been used/);
    expectRefusedPage(await late.get(`/dashboard/invite/${code}`), 410, /already been used/);
    const json = await late.request('GET', `/dashboard/invite/${code}`, { headers: { accept: 'application/json' } });
    expect(json.body.error.code).to.equal('invitation_used');
    expect(await membersOf(o)).to.deep.equal(before);
    expect((await InviteCode.findOne({ where: { code } }))!.uses).to.equal(1);
  });

  it('operator through the API: max_uses counted under concurrency, expiry and revocation refused with a page, an existing account proves its password', async () => {
    const admin = await startAdmin();
    try {
      const o = await buildOrg(env().redis);
      const { key } = await buildPlatformKey(['invite-codes:write']);
      const made = await adminCall(admin.url, key, 'POST', '/admin/v1/invite-codes', { org_id: o.org.id, role: 'owner', max_uses: 2 });
      expect(made.status, made.text).to.equal(201);
      expect(made.body.role).to.equal('owner');
      const code = made.body.code as string;

      // 6 browsers at once for 2 uses: exactly 2 join
      const runs = await Promise.all([...Array(6)].map(() => redeem(code, { email: email(), password: WEB_PASSWORD })));
      expect(runs.map((x) => x.r.status).sort()).to.deep.equal([303, 303, 410, 410, 410, 410]);
      expect((await Membership.findAll({ where: { orgId: o.org.id, role: 'owner' } })).length).to.equal(2);
      expect((await InviteCode.findOne({ where: { code } }))!.uses).to.equal(2);

      // an existing account joins with its own password, never by choosing a new one
      const other = await buildOrg(env().redis);
      const existing = await buildWebMember(other.org.id, 'member');
      const open = await adminCall(admin.url, key, 'POST', '/admin/v1/invite-codes', { org_id: o.org.id, email: existing.email.toUpperCase() });
      expect(open.body.email).to.equal(existing.email);
      const wrong = await redeem(open.body.code, { password: 'a brand new password' });
      expectRefusedPage(wrong.r, 400, /already has an account: enter its password/);
      expect(await Membership.count({ where: { orgId: o.org.id, userId: existing.id } })).to.equal(0);
      const right = await redeem(open.body.code, { password: WEB_PASSWORD });
      expect(right.r.status, right.r.text.slice(0, 300)).to.equal(303);
      expect((await Membership.findOne({ where: { orgId: o.org.id, userId: existing.id } }))!.role).to.equal('member');

      const expired = await adminCall(admin.url, key, 'POST', '/admin/v1/invite-codes', { org_id: o.org.id, expires_at: new Date(Date.now() - 1000).toISOString() });
      expectRefusedPage((await redeem(expired.body.code, {})).page, 410, /invitation expired on/);
      const soon = await adminCall(admin.url, key, 'POST', '/admin/v1/invite-codes', { org_id: o.org.id, expires_at: new Date(Date.now() + 60_000).toISOString() });
      const slow = new WebClient(env().gw.url); // opened while valid, submitted after expiry
      expect((await slow.get(`/dashboard/invite/${soon.body.code}`)).status).to.equal(200);
      await InviteCode.update({ expiresAt: new Date(Date.now() - 1000) }, { where: { id: soon.body.id } });
      expectRefusedPage(await slow.post(`/dashboard/invite/${soon.body.code}`, { email: email(), password: WEB_PASSWORD }), 410, /invitation expired on/);

      const revoked = await adminCall(admin.url, key, 'POST', '/admin/v1/invite-codes', { org_id: o.org.id });
      const page = new WebClient(env().gw.url);
      expect((await page.get(`/dashboard/invite/${revoked.body.code}`)).status).to.equal(200);
      expect((await adminCall(admin.url, key, 'PATCH', `/admin/v1/invite-codes/${revoked.body.id}`, { disabled: true })).status).to.equal(200);
      expectRefusedPage(await page.post(`/dashboard/invite/${revoked.body.code}`, { email: email(), password: WEB_PASSWORD }), 410, /was revoked/);
      expectRefusedPage(await page.get('/dashboard/invite/no-such-code'), 404, /unknown/);
      expect(await Membership.count({ where: { orgId: o.org.id } }), 'only the 3 redeemed joined').to.equal(3);
    } finally {
      await admin.close();
    }
  });

  it('several invitations for one email redeemed at once: one joins, the others are told why (400), none is a 500 or uses its invitation', async () => {
    const o = await buildOrg(env().redis);
    const who = email();
    const invites = await Promise.all([...Array(5)].map(() => createInvitation(o.org.id, who, 'member')));
    // five browsers (five addresses: the sign-in limits count attempts in flight per address)
    const pages = await Promise.all(invites.map(async (i, n) => { const web = new WebClient(env().gw.url, `127.0.250.${10 + n}`); await web.get(`/dashboard/invite/${i.code}`); return { web, i }; }));
    const answers = await Promise.all(pages.map(({ web, i }) => web.post(`/dashboard/invite/${i.code}`, { password: WEB_PASSWORD })));
    expect(answers.map((a) => a.status).sort(), answers.map((a) => a.text.slice(0, 120)).join('\n')).to.deep.equal([303, 400, 400, 400, 400]);
    expect(await User.count({ where: { email: who } })).to.equal(1);
    expect(await Membership.count({ where: { orgId: o.org.id } })).to.equal(1);
    expect((await InviteCode.findAll({ where: { orgId: o.org.id } })).map((i) => i.uses).sort()).to.deep.equal([0, 0, 0, 0, 1]);
  });

  describe('an account that exists without a password (made by an operator) is never given one by an invitation', () => {
    it('an owner of another org invites its email: refused, no password set, no membership, no session; its own password link still works', async () => {
      const a = await buildOrg(env().redis);
      const b = await buildOrg(env().redis);
      const attacker = await buildWebMember(a.org.id, 'owner');
      const victim = await User.create({ email: email(), name: 'Victim' });
      await Membership.create({ orgId: b.org.id, userId: victim.id, role: 'owner' });
      const web = await dashboardAs(attacker);
      await web.get(`/dashboard/o/${a.org.slug}/members`);
      const made = await web.post(`/dashboard/o/${a.org.slug}/members/invitations`, { email: victim.email, role: 'member' });
      expect(made.status, made.text.slice(0, 300)).to.equal(201);
      const { web: evil, r } = await redeem(linkOf(made.text), { email: victim.email, password: 'attacker-chosen-pw' });
      expectRefusedPage(r, 400, /has no password yet/);
      await victim.reload();
      expect(victim.passwordHash, 'no password set').to.equal(null);
      expect(await Membership.count({ where: { orgId: a.org.id, userId: victim.id } }), 'not joined').to.equal(0);
      expect((await evil.get(`/dashboard/o/${b.org.slug}/keys`)).status, 'no session as the victim').to.not.equal(200);
      const signIn = await new WebClient(env().gw.url).signIn('/dashboard/sign-in', victim.email, 'attacker-chosen-pw');
      expect(signIn.status, 'the typed password does not sign in').to.not.equal(303);
    });

    it('a management key with only invite-codes:write cannot reach a passwordless platform admin through an email-less invitation', async () => {
      const admin = await startAdmin();
      try {
        const a = await buildOrg(env().redis);
        const op = await User.create({ email: email(), name: 'Ops', isPlatformAdmin: true });
        const pk = await buildPlatformKey(['invite-codes:write']);
        const made = await adminCall(admin.url, pk.key, 'POST', '/admin/v1/invite-codes', { org_id: a.org.id, role: 'member' });
        expect(made.status).to.equal(201);
        const { r } = await redeem(made.body.code, { email: op.email, password: 'attacker-chosen-pw' });
        expectRefusedPage(r, 400, /has no password yet/);
        expect((await User.findByPk(op.id))!.passwordHash).to.equal(null);
        expect((await new WebClient(admin.url).signIn('/sign-in', op.email, 'attacker-chosen-pw')).status, 'console sign-in').to.not.equal(303);
        expect((await InviteCode.findOne({ where: { code: made.body.code } }))!.uses, 'the invitation is not used up').to.equal(0);
      } finally {
        await admin.close();
      }
    });
  });

  it('an open invitation is not a password-guessing path: wrong passwords of an existing account count as failed sign-ins (429 past the limit, never checked)', async function () {
    this.timeout(30_000);
    const admin = await startAdmin();
    try {
      const o = await buildOrg(env().redis);
      const victim = await buildWebMember((await buildOrg(env().redis)).org.id, 'member');
      const pk = await buildPlatformKey(['invite-codes:write']);
      const open = await adminCall(admin.url, pk.key, 'POST', '/admin/v1/invite-codes', { org_id: o.org.id, role: 'member', max_uses: 100 });
      expect(open.status).to.equal(201);
      const web = new WebClient(env().gw.url, `127.0.${1 + crypto.randomInt(200)}.${2 + crypto.randomInt(250)}`);
      await web.get(`/dashboard/invite/${open.body.code}`);
      const statuses: number[] = [];
      for (let i = 0; i < config().webSignInMaxAttempts + 2; i++) statuses.push((await web.post(`/dashboard/invite/${open.body.code}`, { email: victim.email, password: `guess-${i}-guess-guess` })).status);
      const limit = config().webSignInMaxAttempts;
      expect(statuses.slice(0, limit)).to.deep.equal(Array(limit).fill(400));
      expect(statuses.slice(limit)).to.deep.equal([429, 429]);
      const right = await web.post(`/dashboard/invite/${open.body.code}`, { email: victim.email, password: WEB_PASSWORD });
      expect(right.status, 'the right password is not even checked now').to.equal(429);
      expect(await Membership.count({ where: { orgId: o.org.id, userId: victim.id } })).to.equal(0);
      // a new account's refusals (a short password) are not sign-in failures: the same address may still join
      const fresh = await web.post(`/dashboard/invite/${open.body.code}`, { email: email(), password: WEB_PASSWORD });
      expect(fresh.status).to.equal(303);
    } finally {
      await admin.close();
    }
  });
});
