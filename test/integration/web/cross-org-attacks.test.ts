import crypto from 'crypto';
import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { buildWebMember, dashboardAs, WebClient } from '../../helpers/web-client';
import { ApiKey, InviteCode, Membership, Project } from '../../../shared/db/models';
import { createInvitation, lockOrgRow } from '../../../shared/tenancy/invitations';
import { removeMember } from '../../../shared/tenancy/members';
import { config } from '../../../shared/config/env';
import { withSettings } from '../../helpers/settings';
import { startSmtpReceiver, type SmtpReceiver } from '../../helpers/smtp-receiver';

/** Two owners of a new org, each signed in on the members page (its forms' CSRF token). */
async function twoOwners(page = 'members') {
  const a = await buildOrg(env().redis);
  const [x, y] = [await buildWebMember(a.org.id, 'owner'), await buildWebMember(a.org.id, 'owner')];
  const [wx, wy] = [await dashboardAs(x), await dashboardAs(y)];
  await wx.get(`/dashboard/o/${a.org.slug}/${page}`);
  await wy.get(`/dashboard/o/${a.org.slug}/${page}`);
  return { a, x, y, wx, wy };
}

/** An owner and a plain member of a new org, the member signed in on the keys page (its forms' CSRF token). */
async function ownerAndMember() {
  const a = await buildOrg(env().redis);
  const owner = await buildWebMember(a.org.id, 'owner');
  const member = await buildWebMember(a.org.id, 'member');
  const wm = await dashboardAs(member);
  await wm.get(`/dashboard/o/${a.org.slug}/keys`);
  return { a, owner, member, wm };
}

describe('dashboard attacks: another org\'s rows by id, a member promoting themselves, two owners demoting each other', () => {
  beforeEach(resetSim);

  it("an owner of org B names org A's key, project, member and invitation by id under B's slug (and under A's): 404, nothing changes", async () => {
    const a = await buildOrg(env().redis);
    const b = await buildOrg(env().redis);
    const aOwner = await buildWebMember(a.org.id, 'owner');
    const aMember = await buildWebMember(a.org.id, 'member');
    const bOwner = await buildWebMember(b.org.id, 'owner');
    const aProject = (await Project.findOne({ where: { orgId: a.org.id } }))!;
    const invite = await createInvitation(a.org.id, `x-${crypto.randomBytes(4).toString('hex')}@example.com`, 'member');
    const web = await dashboardAs(bOwner);
    await web.get(`/dashboard/o/${b.org.slug}/keys`);
    const posts: Array<[string, Record<string, string>]> = [
      [`keys/${a.keyId}/revoke`, {}], [`keys/${a.keyId}/rotate`, { grace_seconds: '0' }], [`keys/${a.keyId}/controls`, { rpm: '1' }],
      [`projects/${aProject.id}/archive`, {}], [`projects/${aProject.id}/budget`, { budget_usd: '1', budget_period: 'day' }],
      [`members/${aMember.id}/role`, { role: 'owner' }], [`members/${aOwner.id}/role`, { role: 'member' }], [`members/${aMember.id}/remove`, {}],
      [`members/${aMember.id}/limits`, { rpm: '1' }], [`members/invitations/${invite.id}/revoke`, {}], [`search/members/${aMember.id}`, { cap: '1', enabled: 'true' }],
    ];
    for (const [path, form] of posts) {
      const r = await web.post(`/dashboard/o/${b.org.slug}/${path}`, form, { json: true });
      expect(r.status, `B's slug: ${path} ${r.text.slice(0, 200)}`).to.equal(404);
      const viaA = await web.post(`/dashboard/o/${a.org.slug}/${path}`, form, { json: true });
      expect(viaA.status, `A's slug: ${path}`).to.equal(404);
    }
    const key = (await ApiKey.findByPk(a.keyId))!;
    expect(key.revokedAt).to.equal(null);
    expect((await Project.findByPk(aProject.id))!.archivedAt).to.equal(null);
    expect((await Membership.findOne({ where: { orgId: a.org.id, userId: aMember.id } }))!.role).to.equal('member');
    expect((await Membership.findOne({ where: { orgId: a.org.id, userId: aOwner.id } }))!.role).to.equal('owner');
    expect((await InviteCode.findByPk(invite.id))!.disabled).to.equal(false);
  });

  it('a plain member cannot promote themselves, invite, or act on an owner', async () => {
    const { a, owner, member, wm: web } = await ownerAndMember();
    for (const [path, form] of [[`members/${member.id}/role`, { role: 'owner' }], ['members/invitations', { email: 'me2@example.com', role: 'owner' }], [`members/${owner.id}/remove`, {}], [`keys/${a.keyId}/revoke`, {}]] as Array<[string, Record<string, string>]>) {
      const r = await web.post(`/dashboard/o/${a.org.slug}/${path}`, form, { json: true });
      expect(r.status, path).to.equal(403);
    }
    expect((await Membership.findOne({ where: { orgId: a.org.id, userId: member.id } }))!.role).to.equal('member');
    expect(await InviteCode.count({ where: { orgId: a.org.id } })).to.equal(0);
  });

  it('an invitee cannot choose their role by adding one to the form', async () => {
    const a = await buildOrg(env().redis);
    const email = `inv-${crypto.randomBytes(4).toString('hex')}@example.com`;
    const invite = await createInvitation(a.org.id, email, 'member');
    const web = new WebClient(env().gw.url);
    await web.get(`/dashboard/invite/${invite.code}`);
    const r = await web.post(`/dashboard/invite/${invite.code}`, { email, password: 'a long enough password', role: 'owner' });
    expect(r.status).to.equal(303);
    const m = await Membership.findOne({ where: { orgId: a.org.id }, order: [['createdAt', 'DESC']] });
    expect(m!.role).to.equal('member');
    const again = await new WebClient(env().gw.url).get(`/dashboard/invite/${invite.code}`);
    expect(again.status).to.equal(410);
  });

  it('two owners demoting (or removing) each other at once leave the organization one owner: the loser is 409 last_owner', async () => {
    for (const action of ['role', 'remove'] as const) {
      for (let round = 0; round < 4; round++) {
        const { a, x, y, wx, wy } = await twoOwners();
        const form: Record<string, string> = action === 'role' ? { role: 'member' } : {};
        const [rx, ry] = await Promise.all([
          wx.post(`/dashboard/o/${a.org.slug}/members/${y.id}/${action}`, form, { json: true }),
          wy.post(`/dashboard/o/${a.org.slug}/members/${x.id}/${action}`, form, { json: true }),
        ]);
        // the loser is 409 last_owner when both were checked as owners; when its own check ran after the
        // winner's change committed it is no longer an owner (403 owner_required) or no longer a member (404)
        const [won, lost] = [rx.status, ry.status].sort();
        expect(won, `${action} round ${round}`).to.equal(303);
        expect(lost, `${action} round ${round}`).to.be.oneOf(action === 'role' ? [409, 403] : [409, 404]);
        expect(await Membership.count({ where: { orgId: a.org.id, role: 'owner' } }), `${action} round ${round}`).to.equal(1);
      }
    }
  });
});

describe('dashboard attacks: invitations as a mail cannon', () => {
  beforeEach(resetSim);

  it("an owner's invitations are limited per organization per hour (each may mail anyone): past WEB_INVITATIONS_PER_HOUR, 429 too_many_invitations and nothing is created", async () => {
    const { a, wx, wy } = await twoOwners();
    const limit = config().webInvitationsPerHour;
    const invite = (w: WebClient) => w.post(`/dashboard/o/${a.org.slug}/members/invitations`, { email: `spam-${crypto.randomBytes(4).toString('hex')}@example.com`, role: 'member' }, { json: true });
    // two owners share the organization's allowance
    for (let i = 0; i < limit; i++) expect((await invite(i % 2 ? wx : wy)).status, `invitation ${i + 1}`).to.equal(201);
    for (const w of [wx, wy]) {
      const over = await invite(w);
      expect(over.status).to.equal(429);
      expect(over.body.error.code).to.equal('too_many_invitations');
      expect(Number(over.headers['retry-after'])).to.be.within(1, 3600);
    }
    expect(await InviteCode.count({ where: { orgId: a.org.id } })).to.equal(limit);
    // another organization's owners are not held by it
    const b = await buildOrg(env().redis);
    const wb = await dashboardAs(await buildWebMember(b.org.id, 'owner'));
    await wb.get(`/dashboard/o/${b.org.slug}/members`);
    expect((await wb.post(`/dashboard/o/${b.org.slug}/members/invitations`, { email: 'someone@example.com', role: 'member' }, { json: true })).status).to.equal(201);
  });
});

describe('dashboard attacks: malformed ids, borrowed CSRF tokens, a removed member', () => {
  beforeEach(resetSim);

  it('an id that is not a uuid in any form path is 404, never a 500', async () => {
    const a = await buildOrg(env().redis);
    const owner = await buildWebMember(a.org.id, 'owner');
    const web = await dashboardAs(owner);
    await web.get(`/dashboard/o/${a.org.slug}/keys`);
    for (const path of ['keys/x1/revoke', 'keys/x1/rotate', 'keys/x1/controls', 'projects/x1/archive', 'projects/x1/budget', 'members/x1/role', 'members/x1/remove', 'members/x1/limits', 'members/invitations/x1/revoke', 'search/members/x1', 'activity/x1']) {
      const r = path.startsWith('activity') ? await web.request('GET', `/dashboard/o/${a.org.slug}/${path}`, { headers: { accept: 'application/json' } }) : await web.post(`/dashboard/o/${a.org.slug}/${path}`, { role: 'member', cap: '1', grace_seconds: '0' }, { json: true });
      expect(r.status, `${path}: ${r.text.slice(0, 200)}`).to.equal(404);
    }
    // the management API's member search controls share the function
    const admin = await startAdmin();
    try {
      const pk = await buildPlatformKey(['search:write']);
      const r = await adminCall(admin.url, pk.key, 'PUT', `/admin/v1/search-settings/orgs/${a.org.id}/members/x1`, { cap: 1 });
      expect(r.status, JSON.stringify(r.body)).to.equal(404);
    } finally {
      await admin.close();
    }
  });

  it("a CSRF token from another user's session is refused (403 invalid_csrf_token)", async () => {
    const { a, wx, wy } = await twoOwners('keys');
    const r = await wx.post(`/dashboard/o/${a.org.slug}/keys`, { name: 'borrowed', _csrf: wy.csrf }, { json: true });
    expect(r.status).to.equal(403);
    expect(r.body.error.code).to.equal('invalid_csrf_token');
  });

  it("a member removed from the org keeps a session but no page or form of that org (404)", async () => {
    const { a, owner, member, wm } = await ownerAndMember();
    const wo = await dashboardAs(owner);
    await wo.get(`/dashboard/o/${a.org.slug}/members`);
    expect((await wo.post(`/dashboard/o/${a.org.slug}/members/${member.id}/remove`, {})).status).to.equal(303);
    for (const p of ['', '/keys', '/activity', '/activity.csv', '/projects']) expect((await wm.get(`/dashboard/o/${a.org.slug}${p}`)).status, p).to.equal(404);
    expect((await wm.post(`/dashboard/o/${a.org.slug}/keys`, { name: 'after removal' }, { json: true })).status).to.equal(404);
    expect((await wm.post(`/dashboard/o/${a.org.slug}/projects`, { name: 'after removal' }, { json: true })).status).to.equal(404);
  });
});

describe('dashboard attacks: an owner keeping a way back in through their own invitations', () => {
  beforeEach(resetSim);

  for (const end of ['demoted', 'removed'] as const) {
    it(`an owner ${end} by another owner cannot come back as owner through an invitation they made for another address: it is revoked with their ownership (410 invitation_revoked); other owners' invitations stand`, async () => {
      const { a, x, wx, wy } = await twoOwners();
      const alt = `alt-${crypto.randomBytes(4).toString('hex')}@example.com`;
      expect((await wx.post(`/dashboard/o/${a.org.slug}/members/invitations`, { email: alt, role: 'owner' })).status).to.equal(201);
      const byY = `colleague-${crypto.randomBytes(4).toString('hex')}@example.com`;
      expect((await wy.post(`/dashboard/o/${a.org.slug}/members/invitations`, { email: byY, role: 'member' })).status).to.equal(201);
      // the link is opened while still an owner (the form's CSRF token), and submitted after
      const mine = (await InviteCode.findOne({ where: { orgId: a.org.id, email: alt } }))!;
      const back = new WebClient(env().gw.url);
      expect((await back.get(`/dashboard/invite/${mine.code}`)).status).to.equal(200);
      const form: Record<string, string> = end === 'demoted' ? { role: 'member' } : {};
      expect((await wy.post(`/dashboard/o/${a.org.slug}/members/${x.id}/${end === 'demoted' ? 'role' : 'remove'}`, form)).status).to.equal(303);
      const r = await back.post(`/dashboard/invite/${mine.code}`, { email: alt, password: 'a long enough password' });
      expect(r.status, r.text.slice(0, 300)).to.equal(410);
      expect(r.text).to.contain('invitation_revoked');
      expect((await new WebClient(env().gw.url).get(`/dashboard/invite/${mine.code}`)).status).to.equal(410);
      expect(await Membership.count({ where: { orgId: a.org.id, role: 'owner' } })).to.equal(1);
      const theirs = (await InviteCode.findOne({ where: { orgId: a.org.id, email: byY } }))!;
      expect(theirs.disabled, "the other owner's invitation").to.equal(false);
    });
  }
});

describe('dashboard attacks: an owner claiming someone else\'s email through the invitation they mail', () => {
  let smtp: SmtpReceiver;
  before(async () => {
    smtp = await startSmtpReceiver({ user: 'gateway', pass: 's3cret pass' });
  });
  after(() => smtp.close());

  it('with SMTP set, a mailed invitation link is never shown to the owner (notice, open invitations), so only the mailbox can redeem it', async () => {
    const a = await buildOrg(env().redis);
    const owner = await buildWebMember(a.org.id, 'owner');
    const victim = `ceo-${crypto.randomBytes(4).toString('hex')}@example.com`;
    await withSettings({ SMTP_URL: smtp.url, MAIL_FROM: 'Gateway <noreply@gateway.test>' }, async () => {
      const web = await dashboardAs(owner);
      const b = `/dashboard/o/${a.org.slug}/members`;
      await web.get(b);
      const made = await web.post(`${b}/invitations`, { email: victim, role: 'member' });
      expect(made.status).to.equal(201);
      const inv = (await InviteCode.findOne({ where: { orgId: a.org.id, email: victim } }))!;
      expect(made.text, 'the answer to the form').not.to.include(inv.code);
      const list = await web.get(b);
      expect(list.text, 'the open invitations').not.to.include(inv.code);
      expect(list.text).to.include(victim);
      expect(list.text).to.include('data-test="invite-mailed"');
    });
  });
});

describe('dashboard attacks: an invitation made while its owner is being demoted', () => {
  beforeEach(resetSim);

  it('an invitation created at the moment its maker is demoted never survives them: made before, revoked with the demotion; after, refused 403 owner_required', async () => {
    for (let round = 0; round < 6; round++) {
      const { a, x, wx, wy } = await twoOwners();
      const [made, demoted] = await Promise.all([
        wx.post(`/dashboard/o/${a.org.slug}/members/invitations`, { email: `alt-${round}-${crypto.randomBytes(3).toString('hex')}@example.com`, role: 'owner' }, { json: true }),
        wy.post(`/dashboard/o/${a.org.slug}/members/${x.id}/role`, { role: 'member' }, { json: true }),
      ]);
      expect(demoted.status, `round ${round}`).to.equal(303);
      expect([201, 403], `round ${round}: ${made.text.slice(0, 200)}`).to.include(made.status);
      expect(await InviteCode.count({ where: { orgId: a.org.id, invitedBy: x.id, disabled: false } }), `round ${round}: an open invitation of a demoted owner`).to.equal(0);
    }
  });

  it("an operator's removal (the management API's and the CLI's removeMember) waits for the organization's row lock that invitations are made under, so one made at that moment is revoked with its maker or refused", async () => {
    const { a, x } = await twoOwners();
    // an invitation being made holds the org's row lock (shared/tenancy/invitations.ts): a removal must wait for it
    const t = await Membership.sequelize!.transaction();
    let removal: Promise<{ removed: boolean }> | undefined;
    try {
      await lockOrgRow(a.org.id, t);
      removal = removeMember(env().redis, a.org.id, x.id);
      await new Promise((r) => setTimeout(r, 400));
      expect(await Membership.count({ where: { orgId: a.org.id, userId: x.id } }), 'the removal waits for the lock').to.equal(1);
    } finally {
      await t.commit();
    }
    expect((await removal!).removed).to.equal(true);
    expect(await Membership.count({ where: { orgId: a.org.id, userId: x.id } })).to.equal(0);
  });
});
