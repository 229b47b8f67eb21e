import { expect } from 'chai';
import { execFile } from 'child_process';
import path from 'path';
import { promisify } from 'util';
import { env, resetSim, startGateway } from '../../helpers/harness';
import { adminCall, buildPlatformAdmin, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { call, keyHeader } from '../../helpers/http';
import { buildWebMember, dashboardAs, WebClient, WEB_PASSWORD } from '../../helpers/web-client';
import { setPassword } from '../../../shared/web/passwords';
import { searchOrg, search, expectSearchError, ledger } from '../search/helpers';
import { ApiKey, AuditLog, Image, Membership, User } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { createApiKey, createProject } from '../../../shared/tenancy/ops';
import { ADOPT_MEMBER_KEYS } from '../../../shared/db/migrations/0019-member-keys';
import { db } from '../../../shared/db/sequelize';
import { waitFor } from '../../helpers/wait';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../../../scripts/cli.js');
const gateway = (...args: string[]) => run(process.execPath, [cli, ...args], { env: process.env });

const newKeyOf = (html: string) => /data-test="new-key">([^<]+)</.exec(html)?.[1] ?? '';
const models = (key: string, base?: string) => call('GET', '/v1/models', { headers: keyHeader(key), base });
const expectRefusedKey = async (key: string, base?: string) => {
  const r = await models(key, base);
  expect(r.status, r.text).to.equal(401);
  expect(r.body.error.code).to.equal('INVALID_API_KEY');
};

describe('every key belongs to someone (dashboard, CLI, departure)', () => {
  beforeEach(resetSim);

  it("a member's key form naming a project that is not one of the org's (not a project id at all, or another org's) is refused 400 invalid_project, never a 500, and makes no key", async () => {
    const o = await searchOrg({ monthlyAllowance: 1 });
    const other = await searchOrg({ monthlyAllowance: 1 });
    const foreign = await createProject(env().redis, other.org.id, 'Theirs');
    const member = await buildWebMember(o.org.id, 'member');
    const web = await dashboardAs(member);
    expect((await web.get(`/dashboard/o/${o.org.slug}/keys`)).status).to.equal(200);
    for (const project of ['not-a-uuid', foreign.id]) {
      const r = await web.post(`/dashboard/o/${o.org.slug}/keys`, { name: 'stray', project }, { json: true });
      expect([r.status, r.body.error?.code], `${project}: ${r.text.slice(0, 200)}`).to.deep.equal([400, 'invalid_project']);
    }
    expect(await ApiKey.count({ where: { orgId: o.org.id, userId: member.id } })).to.equal(0);
  });

  it("a member's dashboard key is the member's: their tool deny, search switch and cap apply to it, and nothing is billed", async () => {
    const o = await searchOrg({ monthlyAllowance: 100 });
    const member = await buildWebMember(o.org.id, 'member');
    await Membership.update({ searchEnabled: false, searchCap: 1 }, { where: { orgId: o.org.id, userId: member.id } });
    await member.update({ policies: { mcp_tools: { web_search: 'deny', generate_image: 'deny' } } });
    await bumpEpoch(env().redis);

    const web = await dashboardAs(member);
    await web.get(`/dashboard/o/${o.org.slug}/keys`);
    const made = await web.post(`/dashboard/o/${o.org.slug}/keys`, { name: 'mine' });
    expect(made.status, made.text.slice(0, 300)).to.equal(201);
    const key = newKeyOf(made.text);
    const row = (await ApiKey.findOne({ where: { orgId: o.org.id, name: 'mine' } }))!;
    expect(row.userId).to.equal(member.id);
    expect(made.text).to.include(member.email); // the owner column names the member

    expectSearchError(await search(key, { query: 'q' }), 403, 'mcp_tool_disabled');
    const image = await call('POST', '/mcp', {
      headers: { ...keyHeader(key), accept: 'application/json, text/event-stream' },
      json: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'generate_image', arguments: { prompt: 'a red square' } } },
    });
    expect(image.status, image.text).to.equal(200);
    expect(image.body.result.isError).to.equal(true);
    expect(JSON.parse(image.body.result.content[0].text).error.code).to.equal('mcp_tool_disabled');
    expect(await Image.count({ where: { orgId: o.org.id } }), 'no image generated').to.equal(0);
    await member.update({ policies: {} });
    await bumpEpoch(env().redis);
    expectSearchError(await search(key, { query: 'q' }), 429, 'quota_exceeded'); // switched off for this member
    await Membership.update({ searchEnabled: true }, { where: { orgId: o.org.id, userId: member.id } });
    await bumpEpoch(env().redis);
    expect((await search(key, { query: 'q' })).status).to.equal(200);
    expectSearchError(await search(key, { query: 'q' }), 429, 'quota_exceeded'); // the member's cap of 1
    const rows = await ledger(o.org.id);
    expect(rows.map((r) => r.userId)).to.deep.equal([member.id]); // the one search is recorded as the member's
  });

  it('an org-wide key is made only by an owner who ticks it; a member asking is refused and nothing is created', async () => {
    const o = await searchOrg();
    const owner = await buildWebMember(o.org.id, 'owner');
    const member = await buildWebMember(o.org.id, 'member');
    const asMember = await dashboardAs(member);
    const page = await asMember.get(`/dashboard/o/${o.org.slug}/keys`);
    expect(page.text).not.to.include('name="org_wide"');
    const refused = await asMember.post(`/dashboard/o/${o.org.slug}/keys`, { name: 'sneaky', org_wide: 'true' }, { json: true });
    expect(refused.status).to.equal(403);
    expect(refused.body.error.code).to.equal('owner_required');
    expect(await ApiKey.count({ where: { orgId: o.org.id, name: 'sneaky' } })).to.equal(0);

    const asOwner = await dashboardAs(owner);
    expect((await asOwner.get(`/dashboard/o/${o.org.slug}/keys`)).text).to.include('name="org_wide"');
    expect((await asOwner.post(`/dashboard/o/${o.org.slug}/keys`, { name: 'owner-own' })).status).to.equal(201);
    const wide = await asOwner.post(`/dashboard/o/${o.org.slug}/keys`, { name: 'shared', org_wide: 'true' });
    expect(wide.status).to.equal(201);
    expect((await ApiKey.findOne({ where: { orgId: o.org.id, name: 'owner-own' } }))!.userId).to.equal(owner.id);
    expect((await ApiKey.findOne({ where: { orgId: o.org.id, name: 'shared' } }))!.userId).to.equal(null);
    const listed = await asOwner.get(`/dashboard/o/${o.org.slug}/keys`);
    const ownerCell = (name: string) => new RegExp(`data-test="key-name">${name}<br><code>[^<]+</code></td><td data-label="Owner" data-test="key-owner" class="email">([^]*?)</td>`).exec(listed.text)?.[1];
    expect(ownerCell('owner-own')).to.equal(owner.email);
    expect(ownerCell('shared')).to.include('organization-wide');
  });

  it("a member revokes only their own keys; another's or an org-wide key is refused (403) and stays active", async () => {
    const o = await searchOrg();
    const member = await buildWebMember(o.org.id, 'member');
    const other = await buildWebMember(o.org.id, 'member');
    const mine = await createApiKey(env().redis, { orgId: o.org.id, userId: member.id });
    const theirs = await createApiKey(env().redis, { orgId: o.org.id, userId: other.id });
    const web = await dashboardAs(member);
    await web.get(`/dashboard/o/${o.org.slug}/keys`);
    for (const id of [theirs.id, o.keyId]) {
      const r = await web.post(`/dashboard/o/${o.org.slug}/keys/${id}/revoke`, {}, { json: true });
      expect(r.status).to.equal(403);
      expect(r.body.error.code).to.equal('owner_required');
    }
    expect((await models(theirs.key)).status).to.equal(200);
    expect((await models(o.key)).status).to.equal(200);
    expect((await web.post(`/dashboard/o/${o.org.slug}/keys/${mine.id}/revoke`)).status).to.equal(303);
    await expectRefusedKey(mine.key);
  });

  it("a member's keys stop working on every pod when the member is removed (gateway member remove), and stay revoked if they return", async function () {
    this.timeout(30_000);
    const o = await searchOrg();
    const member = await buildWebMember(o.org.id, 'member');
    const k = await createApiKey(env().redis, { orgId: o.org.id, userId: member.id });
    const second = await startGateway('member-keys-pod-2');
    try {
      for (const base of [undefined, second.url]) expect((await models(k.key, base)).status).to.equal(200); // cached on both pods now
      const out = await gateway('member', 'remove', '--org', o.org.slug, '--user', member.email);
      expect(out.stdout).to.include('1 API key(s) revoked');
      for (const base of [undefined, second.url]) await expectRefusedKey(k.key, base);
    } finally {
      await second.close();
    }
    expect((await models(o.key)).status).to.equal(200); // the org-wide key is not the member's
    await gateway('member', 'add', '--org', o.org.slug, '--user', member.email);
    await expectRefusedKey(k.key);
    const audited = await AuditLog.findOne({ where: { targetId: `${o.org.id}/${member.id}`, method: 'DELETE' } });
    expect(audited).to.include({ actorType: 'cli', status: 200 });
    const again = await gateway('member', 'remove', '--org', o.org.slug, '--user', 'nobody@example.com').catch((e: { code: number; stderr: string }) => e);
    expect((again as { code: number }).code).to.equal(1);
  });

  it('a key whose member left by any path (membership row gone, user deleted, user row removed by hand) is refused with INVALID_API_KEY, after a cached success', async () => {
    const admin = await startAdmin();
    try {
      const o = await searchOrg();
      const left = await buildWebMember(o.org.id, 'member');
      const deleted = await buildWebMember(o.org.id, 'member');
      const kLeft = await createApiKey(env().redis, { orgId: o.org.id, userId: left.id });
      const kDeleted = await createApiKey(env().redis, { orgId: o.org.id, userId: deleted.id });
      for (const k of [kLeft, kDeleted]) expect((await models(k.key)).status).to.equal(200);
      await Membership.destroy({ where: { orgId: o.org.id, userId: left.id } });
      await bumpEpoch(env().redis);
      await expectRefusedKey(kLeft.key);
      expect(await ApiKey.count({ where: { id: kLeft.id, revokedAt: null } }), 'refused by the membership check, not a revocation').to.equal(1);
      const { key } = await buildPlatformKey(['users:write']);
      expect((await adminCall(admin.url, key, 'DELETE', `/admin/v1/users/${deleted.id}`)).status).to.equal(200);
      await expectRefusedKey(kDeleted.key);
      expect((await ApiKey.findByPk(kDeleted.id))!.revokedAt).to.not.equal(null);
      // a user row removed by hand takes its keys along: they never become org-wide keys
      const erased = await buildWebMember(o.org.id, 'member');
      const kErased = await createApiKey(env().redis, { orgId: o.org.id, userId: erased.id });
      expect((await models(kErased.key)).status).to.equal(200);
      await db().query('DELETE FROM users WHERE id = :id', { replacements: { id: erased.id } });
      await bumpEpoch(env().redis);
      expect(await ApiKey.count({ where: { id: kErased.id } })).to.equal(0);
      await expectRefusedKey(kErased.key);
      expect((await models(o.key)).status).to.equal(200);
    } finally {
      await admin.close();
    }
  });

  it("a user deleted in the operator console: their key is refused on the next request (the console bumps the cache epoch)", async () => {
    const admin = await startAdmin();
    try {
      const o = await searchOrg();
      const member = await buildWebMember(o.org.id, 'member');
      const k = await createApiKey(env().redis, { orgId: o.org.id, userId: member.id });
      expect((await models(k.key)).status).to.equal(200); // cached
      const op = await buildPlatformAdmin();
      await setPassword(op, WEB_PASSWORD);
      const web = new WebClient(admin.url);
      expect((await web.signIn('/sign-in', op.email, WEB_PASSWORD)).status).to.equal(303);
      await web.get('/users');
      expect((await web.post(`/users/${member.id}/delete`)).status).to.equal(303);
      await expectRefusedKey(k.key);
    } finally {
      await admin.close();
    }
  });

  it('gateway key create says whose key it made; key list shows each key\'s owner', async function () {
    this.timeout(30_000);
    const o = await searchOrg();
    const member = await buildWebMember(o.org.id, 'member');
    expect((await gateway('key', 'create', '--org', o.org.slug, '--user', member.email)).stdout).to.include(`belongs to ${member.email}`);
    expect((await gateway('key', 'create', '--org', o.org.slug)).stdout).to.include('organization-wide');
    const list = (await gateway('key', 'list', '--org', o.org.slug)).stdout.trim().split('\n');
    expect(list.filter((l) => l.includes(member.email))).to.have.length(1);
    expect(list.filter((l) => l.includes('org-wide'))).to.have.length(2); // the factory's key and the one above
  });

  it('management API: a key names its owner explicitly (user_id xor org_wide), is listed with it, and a removed member\'s key dies', async () => {
    const admin = await startAdmin();
    try {
      const o = await searchOrg();
      const member = await buildWebMember(o.org.id, 'member');
      const stranger = await User.create({ email: `stranger-${Date.now()}@example.com` });
      const { key } = await buildPlatformKey(['organizations:write']);
      const base = `/admin/v1/organizations/${o.org.id}`;
      const before = await ApiKey.count({ where: { orgId: o.org.id } });
      for (const body of [{ name: 'whose?' }, { user_id: member.id, org_wide: true }, { org_wide: false }]) {
        const r = await adminCall(admin.url, key, 'POST', `${base}/api-keys`, body);
        expect(r.status, JSON.stringify(body)).to.equal(400);
      }
      const notMember = await adminCall(admin.url, key, 'POST', `${base}/api-keys`, { user_id: stranger.id });
      expect(notMember.status).to.equal(400);
      expect(notMember.body.error.code).to.equal('invalid_owner');
      expect(await ApiKey.count({ where: { orgId: o.org.id } }), 'nothing created').to.equal(before);
      const mine = await adminCall(admin.url, key, 'POST', `${base}/api-keys`, { user_id: member.id, name: 'api-member', project: 'proj' });
      expect(mine.status, mine.text).to.equal(201);
      expect(mine.body).to.include({ user_id: member.id, owner: 'member', project_id: o.project.id, state: 'active' });
      const wide = await adminCall(admin.url, key, 'POST', `${base}/api-keys`, { org_wide: true, name: 'api-wide' });
      expect(wide.body).to.include({ user_id: null, owner: 'organization' });
      expect((await ApiKey.findByPk(mine.body.id))!.userId).to.equal(member.id);
      const listed = await adminCall(admin.url, key, 'GET', `${base}/api-keys`);
      expect(listed.text).not.to.include(mine.body.key);
      expect(listed.body.data.map((k: { name: string; owner: string }) => `${k.name}:${k.owner}`)).to.include.members(['api-member:member', 'api-wide:organization']);
      expect((await models(mine.body.key)).status).to.equal(200);
      const removed = await adminCall(admin.url, key, 'DELETE', `${base}/members/${member.id}`);
      expect(removed.status, removed.text).to.equal(200);
      expect(removed.body).to.include({ deleted: true, revoked_api_keys: 1 });
      await expectRefusedKey(mine.body.key);
      expect((await adminCall(admin.url, key, 'DELETE', `${base}/members/${member.id}`)).status).to.equal(404);
      const revoked = await adminCall(admin.url, key, 'POST', `${base}/api-keys/${wide.body.id}/revoke`);
      expect(revoked.body).to.include({ state: 'revoked' });
      await expectRefusedKey(wide.body.key);
      const audited = await waitFor(async () => (await AuditLog.count({ where: { path: `${base}/members/${member.id}` } })) >= 2);
      expect(audited).to.equal(true);
    } finally {
      await admin.close();
    }
  });

  it('migration 0019: an org-wide key a non-owner made on the dashboard becomes theirs; owners\' and CLI keys stay org-wide', async () => {
    const o = await searchOrg();
    const owner = await buildWebMember(o.org.id, 'owner');
    const member = await buildWebMember(o.org.id, 'member');
    const gone = await buildWebMember(o.org.id, 'member');
    const made = async (by: User | null) => {
      const k = await createApiKey(env().redis, { orgId: o.org.id }); // what the dashboard made before
      if (by) await AuditLog.create({ actorType: 'web_session', actorId: by.id, actorLabel: by.email, method: 'POST', path: `/dashboard/o/${o.org.slug}/keys`, family: 'organizations', targetId: k.id, status: 201, outcome: 'success' });
      return k;
    };
    const [byOwner, byMember, byGone, byCli] = [await made(owner), await made(member), await made(gone), await made(null)];
    await Membership.destroy({ where: { orgId: o.org.id, userId: gone.id } });
    for (const k of [byOwner, byMember, byGone, byCli]) expect((await models(k.key)).status).to.equal(200);
    await db().query(ADOPT_MEMBER_KEYS);
    await bumpEpoch(env().redis);
    const owners = async () => Promise.all([byOwner, byMember, byGone, byCli].map(async (k) => (await ApiKey.findByPk(k.id))!.userId));
    expect(await owners()).to.deep.equal([null, member.id, gone.id, null]);
    await expectRefusedKey(byGone.key); // its maker has left
    for (const k of [byOwner, byMember, byCli]) expect((await models(k.key)).status).to.equal(200);
    await db().query(ADOPT_MEMBER_KEYS); // runs again harmlessly
    expect(await owners()).to.deep.equal([null, member.id, gone.id, null]);
  });
});
