import { expect } from 'chai';
import { execFile } from 'child_process';
import path from 'path';
import { promisify } from 'util';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { buildWebMember, dashboardAs, WebClient, WEB_PASSWORD } from '../../helpers/web-client';
import { ApiKey, InviteCode, Membership, User } from '../../../shared/db/models';
import { createInvitation } from '../../../shared/tenancy/invitations';
import { createApiKey } from '../../../shared/tenancy/ops';
import { removeMember, updateMemberLimits } from '../../../shared/tenancy/members';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../../../scripts/cli.js');
const gateway = (...args: string[]) => run(process.execPath, [cli, ...args], { env: process.env });
const linkOf = (text: string) => /\/dashboard\/invite\/([A-Za-z0-9_-]+)/.exec(text)?.[1] ?? '';
const newKeyOf = (html: string) => /data-test="new-key">([^<]+)</.exec(html)?.[1] ?? '';
const chat = (key: string, model: string) =>
  call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model, max_tokens: 5, messages: [{ role: 'user', content: 'back again' }] } });
const setOf = async (orgId: string, userId: string) => {
  const m = await Membership.findOne({ where: { orgId, userId } });
  return m && { allowedModels: m.allowedModels, rpm: m.rpm, tpm: m.tpm, budgetMicros: m.budgetMicros, budgetPeriod: m.budgetPeriod, searchCap: m.searchCap, searchEnabled: m.searchEnabled };
};
const LIMITED = { allowedModels: ['sim-chat'], rpm: 5, tpm: null, budgetMicros: 2_000_000, budgetPeriod: 'month', searchCap: 3, searchEnabled: false };
const NONE = { allowedModels: null, rpm: null, tpm: null, budgetMicros: null, budgetPeriod: null, searchCap: null, searchEnabled: true };

/**
 * A member removed and added back (docs/keys.md "Member limits"): what the owner set on them (limits,
 * search cap and switch) comes back with them, whichever way they come back (an invitation from the
 * dashboard or the management API, `gateway member add`); the keys the removal revoked stay revoked;
 * a key cannot be made for them while they are not a member. Before, the membership row and its
 * limits went with the removal, and a re-invited member's new key ran without any limit.
 */
describe('members removed and added back keep the limits an owner set on them', () => {
  beforeEach(resetSim);

  it('re-invited on the dashboard: limits, search cap and switch come back; a new key of theirs is limited again; the old key stays revoked', async function () {
    this.timeout(60_000);
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    const member = await buildWebMember(o.org.id, 'member');
    const old = await createApiKey(env().redis, { orgId: o.org.id, userId: member.id });
    await updateMemberLimits(env().redis, o.org.id, member.id, { allowedModels: ['sim-chat'], rpm: 5, budgetMicros: 2_000_000, budgetPeriod: 'month' });
    await Membership.update({ searchCap: 3, searchEnabled: false }, { where: { orgId: o.org.id, userId: member.id } });
    expect((await chat(old.key, 'sim-claude')).status, 'limited before').to.equal(403);

    const asOwner = await dashboardAs(owner);
    const page = `/dashboard/o/${o.org.slug}/members`;
    expect((await asOwner.get(page)).status).to.equal(200);
    const removed = await asOwner.post(`${page}/${member.id}/remove`, {});
    expect(removed.status, removed.text.slice(0, 300)).to.be.oneOf([200, 303]);
    expect(await setOf(o.org.id, member.id), 'removed').to.equal(null);
    expect((await chat(old.key, 'sim-chat')).status, 'the removal revoked the key').to.equal(401);

    expect((await asOwner.get(page)).status).to.equal(200);
    const made = await asOwner.post(`${page}/invitations`, { email: member.email, role: 'member' });
    expect(made.status, made.text.slice(0, 300)).to.equal(201);
    const web = new WebClient(env().gw.url);
    const code = linkOf(made.text);
    await web.get(`/dashboard/invite/${code}`);
    const joined = await web.post(`/dashboard/invite/${code}`, { email: member.email, password: WEB_PASSWORD });
    expect(joined.status, joined.text.slice(0, 300)).to.be.oneOf([200, 303]);
    expect(await setOf(o.org.id, member.id), 'what the owner set is back').to.deep.equal(LIMITED);

    const asMember = await dashboardAs(member);
    expect((await asMember.get(`/dashboard/o/${o.org.slug}/keys`)).status).to.equal(200);
    const key = newKeyOf((await asMember.post(`/dashboard/o/${o.org.slug}/keys`, { name: 'fresh start' })).text);
    expect(key).to.match(/^svc_/);
    const refused = await chat(key, 'sim-claude');
    expect([refused.status, refused.body.error.code], 'the member limit applies to the new key').to.deep.equal([403, 'model_not_allowed']);
    expect((await chat(key, 'sim-chat')).status).to.equal(200);
    expect((await chat(old.key, 'sim-chat')).status, 'the old key stays revoked').to.equal(401);
    expect((await ApiKey.findByPk(old.id))!.revokedAt).to.not.equal(null);
  });

  it('removed by the management API and added back by an operator invitation or `gateway member add`: the same; limits cleared before the removal do not come back', async function () {
    this.timeout(90_000);
    const admin = await startAdmin();
    try {
      const { key: platform } = await buildPlatformKey(['organizations:write', 'invite-codes:write']);
      const o = await buildOrg(env().redis);
      const member = await buildWebMember(o.org.id, 'member');
      await updateMemberLimits(env().redis, o.org.id, member.id, { allowedModels: ['sim-chat'], rpm: 5, budgetMicros: 2_000_000, budgetPeriod: 'month' });
      await Membership.update({ searchCap: 3, searchEnabled: false }, { where: { orgId: o.org.id, userId: member.id } });
      const del = await adminCall(admin.url, platform, 'DELETE', `/admin/v1/organizations/${o.org.id}/members/${member.id}`);
      expect(del.status, del.text).to.equal(200);

      const inv = await adminCall(admin.url, platform, 'POST', '/admin/v1/invite-codes', { org_id: o.org.id, email: member.email, role: 'member' });
      expect(inv.status, inv.text).to.equal(201);
      const web = new WebClient(env().gw.url);
      await web.get(`/dashboard/invite/${inv.body.code}`);
      const joined = await web.post(`/dashboard/invite/${inv.body.code}`, { email: member.email, password: WEB_PASSWORD });
      expect(joined.status, joined.text.slice(0, 300)).to.be.oneOf([200, 303]);
      expect(await setOf(o.org.id, member.id)).to.deep.equal(LIMITED);
      const listed = await adminCall(admin.url, platform, 'PATCH', `/admin/v1/organizations/${o.org.id}/members/${member.id}`, { tpm: 1000 });
      expect([listed.body.rpm, listed.body.allowed_models, listed.body.budget.limit_usd], 'the management API shows them').to.deep.equal([5, ['sim-chat'], 2]);

      // removed by the CLI, added back by the CLI
      await gateway('member', 'remove', '--org', o.org.slug, '--user', member.email);
      expect(await setOf(o.org.id, member.id)).to.equal(null);
      const { stdout } = await gateway('member', 'add', '--org', o.org.slug, '--user', member.email);
      expect(stdout).to.include('with the limits an owner set on them');
      expect(await setOf(o.org.id, member.id)).to.deep.equal({ ...LIMITED, tpm: 1000 });

      // the owner lifts them, then removes and adds back: nothing comes back
      await updateMemberLimits(env().redis, o.org.id, member.id, { allowedModels: null, rpm: null, tpm: null, budgetMicros: null, budgetPeriod: null });
      await Membership.update({ searchCap: null, searchEnabled: true }, { where: { orgId: o.org.id, userId: member.id } });
      await gateway('member', 'remove', '--org', o.org.slug, '--user', member.email);
      const again = await gateway('member', 'add', '--org', o.org.slug, '--user', member.email);
      expect(again.stdout).to.not.include('with the limits');
      expect(await setOf(o.org.id, member.id)).to.deep.equal(NONE);
    } finally {
      await admin.close();
    }
  });

  it('a removed member cannot walk back in with a second invitation that was still open (it is revoked with the removal, 410); a new invitation after the removal works', async function () {
    this.timeout(60_000);
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    const email = `twice-${Date.now()}@example.com`;
    const first = await createInvitation(o.org.id, email, 'member', owner.id);
    const second = await createInvitation(o.org.id, email.toUpperCase(), 'member', owner.id);
    const open = async (code: string) => {
      const web = new WebClient(env().gw.url);
      await web.get(`/dashboard/invite/${code}`);
      return web.post(`/dashboard/invite/${code}`, { email, password: WEB_PASSWORD }, { json: true });
    };
    expect((await open(first.code)).status).to.be.oneOf([200, 303]);
    const joined = await User.findOne({ where: { email } });
    await updateMemberLimits(env().redis, o.org.id, joined!.id, { rpm: 3 });
    await removeMember(env().redis, o.org.id, joined!.id);

    const back = await new WebClient(env().gw.url).get(`/dashboard/invite/${second.code}`);
    expect(back.status, back.text.slice(0, 200)).to.equal(410);
    expect(back.text).to.include('This invitation was revoked');
    expect(await setOf(o.org.id, joined!.id), 'not a member').to.equal(null);
    expect(await InviteCode.count({ where: { orgId: o.org.id, disabled: false } }), 'no open invitation for them is left').to.equal(0);

    const again = await createInvitation(o.org.id, email, 'member', owner.id);
    expect((await open(again.code)).status).to.be.oneOf([200, 303]);
    expect((await setOf(o.org.id, joined!.id))!.rpm, 'back, with their limit').to.equal(3);
  });

  it('no key is left active for a removed member: made during the removal it is revoked with the others, made after it is refused (400 invalid_owner), so nothing comes back alive when they are added back', async function () {
    this.timeout(60_000);
    const o = await buildOrg(env().redis);
    for (let i = 0; i < 8; i++) {
      const member = await buildWebMember(o.org.id, 'member');
      const [, made] = await Promise.all([
        removeMember(env().redis, o.org.id, member.id),
        createApiKey(env().redis, { orgId: o.org.id, userId: member.id }).then((k) => k, (err: { status?: number; code?: string }) => err),
      ]);
      if ('key' in made) expect((await ApiKey.findByPk(made.id))!.revokedAt, 'made first: revoked by the removal').to.not.equal(null);
      else expect([made.status, made.code]).to.deep.equal([400, 'invalid_owner']);
      const after = await createApiKey(env().redis, { orgId: o.org.id, userId: member.id }).catch((err: { code?: string }) => err);
      expect((after as { code?: string }).code, 'a key for someone who is not a member').to.equal('invalid_owner');
      expect(await ApiKey.count({ where: { orgId: o.org.id, userId: member.id, revokedAt: null } })).to.equal(0);
    }
  });
});
