import { expect } from 'chai';
import { execFile } from 'child_process';
import path from 'path';
import { promisify } from 'util';
import { env, resetSim, startGateway, type TestGateway } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { buildWebMember, dashboardAs } from '../../helpers/web-client';
import { roomInMinute, waitFor } from '../../helpers/wait';
import { usageSettled } from '../../helpers/usage';
import { Membership, UsageEvent } from '../../../shared/db/models';
import { createApiKey } from '../../../shared/tenancy/ops';
import { updateMemberLimits } from '../../../shared/tenancy/members';
import { ledgerSpend } from '../../../shared/limits/ledger-spend';
import { budgetStatus } from '../../../shared/limits/limits';
import { minuteWindow } from '../../../shared/limits/period';
import { keys as redisKeys } from '../../../shared/redis/keys';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../../../scripts/cli.js');
const gateway = (...args: string[]) => run(process.execPath, [cli, ...args], { env: process.env });

const chat = (key: string, model = 'sim-chat', base?: string) =>
  call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model, max_tokens: 20, messages: [{ role: 'user', content: 'member limits' }] }, base });
const newKeyOf = (html: string) => /data-test="new-key">([^<]+)</.exec(html)?.[1] ?? '';
const limitsOf = async (orgId: string, userId: string) => {
  const m = (await Membership.findOne({ where: { orgId, userId } }))!;
  return { allowedModels: m.allowedModels, rpm: m.rpm, tpm: m.tpm, budgetMicros: m.budgetMicros, budgetPeriod: m.budgetPeriod };
};
const NONE = { allowedModels: null, rpm: null, tpm: null, budgetMicros: null, budgetPeriod: null };

/**
 * Member limits (docs/keys.md "Member limits"): an owner's limits on a member apply to every key the
 * member owns in the org, a key made later on the dashboard included, on top of the key's own; rates
 * and the budget are counted over all those keys together.
 */
describe('member limits: on every key a member owns', () => {
  let second: TestGateway;
  before(async () => {
    second = await startGateway();
  });
  after(() => second.close());
  beforeEach(resetSim);

  it("the owner's form limits a member to one model and 2 rpm: a key the member then makes is refused another model (403) and the third request of the minute over both keys is 429; the member cannot set their own", async function () {
    this.timeout(60_000);
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    const member = await buildWebMember(o.org.id, 'member');
    const first = await createApiKey(env().redis, { orgId: o.org.id, userId: member.id });
    const page = `/dashboard/o/${o.org.slug}/members`;

    const asOwner = await dashboardAs(owner);
    expect((await asOwner.get(page)).text).to.include(`Edit limits of ${member.email}`);
    const refused = await asOwner.post(`${page}/${member.id}/limits`, { models: 'sim-chat', rpm: '-3', tpm: '', budget_usd: '', budget_period: 'month' });
    expect(refused.status, 'a refused form comes back').to.equal(400);
    expect(refused.text).to.include('Requests/min must be greater than or equal to 1');
    expect(await limitsOf(o.org.id, member.id), 'nothing saved').to.deep.equal(NONE);
    const saved = await asOwner.post(`${page}/${member.id}/limits`, { models: 'sim-chat', rpm: '2', tpm: '', budget_usd: '', budget_period: 'month' });
    expect(saved.status, saved.text.slice(0, 300)).to.equal(303);
    expect(await limitsOf(o.org.id, member.id)).to.deep.equal({ ...NONE, allowedModels: ['sim-chat'], rpm: 2 });

    const asMember = await dashboardAs(member);
    const keysPage = await asMember.get(`/dashboard/o/${o.org.slug}/keys`);
    expect(/data-test="own-limits">([^<]+)</.exec(keysPage.text)?.[1], 'the member sees the limits every key of theirs carries').to.include('models sim-chat; 2 requests/min');
    const made = await asMember.post(`/dashboard/o/${o.org.slug}/keys`, { name: 'escape' });
    expect(made.status).to.equal(201);
    const madeKey = newKeyOf(made.text);
    const own = await asMember.post(`${page}/${member.id}/limits`, { models: '', rpm: '', tpm: '', budget_usd: '', budget_period: 'month' }, { json: true });
    expect(own.status, 'a member cannot lift their own limits').to.equal(403);
    expect(own.body.error.code).to.equal('owner_required');
    expect((await limitsOf(o.org.id, member.id)).rpm).to.equal(2);

    const other = await chat(madeKey, 'sim-claude');
    expect(other.status, other.text).to.equal(403);
    expect(other.body.error.code).to.equal('model_not_allowed');
    expect(other.body.error.message).to.include("member's limit");
    expect((await call('GET', '/v1/models', { headers: keyHeader(madeKey) })).body.data.map((m: { id: string }) => m.id), 'the model list follows both lists').to.deep.equal(['sim-chat']);

    expect(await roomInMinute()).to.equal(true);
    expect((await chat(first.key)).status).to.equal(200);
    expect((await chat(madeKey)).status).to.equal(200);
    const third = await chat(first.key, 'sim-chat', second.url); // another pod: the count is the member's, in Redis
    expect(third.status, 'the third request of the minute over both keys').to.equal(429);
    expect(third.body.error.code).to.equal('rate_limit_exceeded');
    expect(third.body.error.message).to.include('member').and.to.include('2 requests per minute');
    expect(Number(third.headers.get('retry-after'))).to.be.within(1, 60);
    expect(third.headers.get('x-ratelimit-remaining-requests'), "the member's minute is the tighter").to.equal('0');
    expect(env().sim.log.entries, 'the refused requests sent nothing').to.have.length(2);

    // a key of another member, and an org-wide key, are not the member's
    const orgWide = await chat(o.key, 'sim-claude');
    expect(orgWide.status, orgWide.text).to.equal(200);

    const cleared = await asOwner.post(`${page}/${member.id}/limits`, { models: '', rpm: '', tpm: '', budget_usd: '', budget_period: 'month' });
    expect(cleared.status).to.equal(303);
    expect(await limitsOf(o.org.id, member.id), 'blank fields clear every limit').to.deep.equal(NONE);
    expect((await chat(madeKey, 'sim-claude')).status, 'the next request after clearing').to.equal(200);
  });

  it('a member budget that fits about 30 worst cases: 160 concurrent requests over two keys on two pods never let the ledger pass it; the 402s bill nothing', async function () {
    this.timeout(120_000);
    const o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 400 } });
    const member = await buildWebMember(o.org.id, 'member');
    const keys = await Promise.all([0, 1].map(() => createApiKey(env().redis, { orgId: o.org.id, userId: member.id })));
    // one worst case: ~15 counted input tokens at 0.5 µ$ + 20 output tokens at 1.5 µ$ ≈ 38 µ$
    const budgetMicros = 1200;
    await updateMemberLimits(env().redis, o.org.id, member.id, { budgetMicros, budgetPeriod: 'day' });
    const replies = await Promise.all(Array.from({ length: 160 }, (_, i) => chat(keys[i % 2].key, 'sim-chat', i % 4 < 2 ? second.url : undefined)));
    const ok = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 402);
    expect(ok.length + refused.length, JSON.stringify(replies.find((r) => r.status !== 200 && r.status !== 402)?.body)).to.equal(160);
    expect(ok.length).to.be.within(15, 110);
    expect(refused.length).to.be.above(0);
    for (const r of refused) {
      expect(r.body.error.code).to.equal('budget_exceeded');
      expect(r.body.error.message).to.contain("the member's budget of $0.0012 per day");
      expect(r.body.error.scope).to.equal('member');
    }
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { apiKeyId: keys.map((k) => k.id) } });
    expect(events.map((e) => e.requestId).sort(), 'only the admitted requests are billed').to.deep.equal(ok.map((r) => r.headers.get('x-service-request-id')).sort());
    expect(new Set(events.map((e) => e.apiKeyId)).size, 'both keys spent').to.equal(2);
    const spent = await ledgerSpend('member', member.id, null, o.org.id);
    expect(spent).to.be.greaterThan(0);
    expect(spent, 'the ledger never exceeds the member budget').to.be.at.most(budgetMicros);
    const status = await waitFor(async () => {
      const s = await budgetStatus(env().redis, o.org.id, 'member', member.id, { micros: budgetMicros, period: 'day' });
      return s.reserved_usd === 0 ? s : null;
    });
    expect(status, 'reservations all settled').to.not.equal(null);
    expect(status!.spent_usd).to.be.closeTo(spent / 1e6, 1e-9);
  });

  it("a member's tpm counts every key's tokens in one minute, output included as usage settles, and refuses the next request that does not fit", async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    const member = await buildWebMember(o.org.id, 'member');
    const [a, b] = await Promise.all([0, 1].map(() => createApiKey(env().redis, { orgId: o.org.id, userId: member.id, controls: { tpm: 100_000 } })));
    await updateMemberLimits(env().redis, o.org.id, member.id, { tpm: 100_000 });
    expect(await roomInMinute(20_000)).to.equal(true);
    for (const k of [a, b]) expect((await chat(k.key)).status).to.equal(200);
    await usageSettled();
    const minute = minuteWindow().id;
    const count = async (name: string) => Number(await env().redis.get(redisKeys.limits(o.org.id, name)));
    const [ka, kb] = [await count(`tpm:${a.id}:${minute}`), await count(`tpm:${b.id}:${minute}`)];
    const events = await UsageEvent.findAll({ where: { apiKeyId: [a.id, b.id] } });
    const output = events.reduce((n, e) => n + (e.outputTokens ?? 0), 0);
    expect(output, 'the answers had output').to.be.greaterThan(0);
    const mine = await waitFor(async () => ((await count(`mtpm:${member.id}:${minute}`)) === ka + kb ? ka + kb : null));
    expect(mine, "the member's minute is both keys' minutes, output included").to.equal(ka + kb);
    await updateMemberLimits(env().redis, o.org.id, member.id, { tpm: mine! + 5 });
    const r = await chat(a.key);
    expect(r.status, r.text).to.equal(429);
    expect(r.body.error.message).to.include('The member this API key belongs to is limited to').and.to.include('tokens per minute');
    expect(r.headers.get('x-ratelimit-remaining-tokens'), "the member's minute has less left than the key's").to.equal('0');
  });

  it("a member budget is seeded from the ledger of all the member's keys in the org", async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    const member = await buildWebMember(o.org.id, 'member');
    const [a, b] = await Promise.all([0, 1].map(() => createApiKey(env().redis, { orgId: o.org.id, userId: member.id })));
    for (const k of [a, b]) expect((await chat(k.key)).status).to.equal(200);
    await usageSettled();
    const spent = await ledgerSpend('member', member.id, null, o.org.id);
    expect(spent, 'two requests billed').to.equal((await ledgerSpend('key', a.id, null)) + (await ledgerSpend('key', b.id, null)));
    // a budget that leaves less than one worst case beside what both keys spent, set after they spent it
    await updateMemberLimits(env().redis, o.org.id, member.id, { budgetMicros: spent + 10, budgetPeriod: 'total' });
    const r = await chat(b.key);
    expect(r.status, r.text).to.equal(402);
    expect(r.body.error.message).to.contain("member's budget").and.to.contain('in total');
  });

  it('the CLI and the management API set a member\'s limits, and clearing removes them', async function () {
    this.timeout(60_000);
    const o = await buildOrg(env().redis);
    const member = await buildWebMember(o.org.id, 'member');
    const k = await createApiKey(env().redis, { orgId: o.org.id, userId: member.id });

    await gateway('member', 'limits', '--org', o.org.slug, '--user', member.email, '--models', 'sim-chat', '--rpm', '5', '--tpm', '9000', '--budget-usd', '2.5', '--budget-period', 'day');
    expect(await limitsOf(o.org.id, member.id)).to.deep.equal({ allowedModels: ['sim-chat'], rpm: 5, tpm: 9000, budgetMicros: 2_500_000, budgetPeriod: 'day' });
    expect((await chat(k.key, 'sim-claude')).status, 'applied on the next request').to.equal(403);
    const bg = await chat(k.key, 'sim-chat-background');
    expect(bg.status, `a -background variant follows its base on the member's list too: ${bg.text}`).to.equal(200);
    const bad = await gateway('member', 'limits', '--org', o.org.slug, '--user', member.email, '--rpm', 'x').catch((e: { code: number; stderr: string }) => e);
    expect((bad as { code: number }).code).to.not.equal(0);
    await gateway('member', 'limits', '--org', o.org.slug, '--user', member.email, '--models', '', '--rpm', '0', '--tpm', '0', '--budget-usd', '');
    expect(await limitsOf(o.org.id, member.id)).to.deep.equal({ ...NONE, budgetPeriod: 'day' });
    expect((await chat(k.key, 'sim-claude')).status, 'cleared').to.equal(200);

    const admin = await startAdmin();
    try {
      const { key } = await buildPlatformKey(['organizations:write']);
      const path = `/admin/v1/organizations/${o.org.id}/members/${member.id}`;
      const set = await adminCall(admin.url, key, 'PATCH', path, { allowed_models: ['sim-chat'], rpm: 7, budget_usd: 3, budget_period: 'month' });
      expect(set.status, set.text).to.equal(200);
      expect(set.body).to.include({ object: 'membership', user_id: member.id, rpm: 7, tpm: null, budget_usd: 3, budget_period: 'month' });
      expect(set.body.allowed_models).to.deep.equal(['sim-chat']);
      expect(set.body.budget).to.include({ limit_usd: 3, period: 'month' });
      expect((await chat(k.key, 'sim-claude')).status).to.equal(403);
      expect((await adminCall(admin.url, key, 'PATCH', path, { expires_at: null })).status, 'a member has no expiry').to.equal(400);
      expect((await adminCall(admin.url, key, 'PATCH', path, { rpm: 0 })).status).to.equal(400);
      expect((await adminCall(admin.url, key, 'PATCH', `/admin/v1/organizations/${o.org.id}/members/${o.org.id}`, { rpm: 3 })).status, 'not a member').to.equal(404);
      const clear = await adminCall(admin.url, key, 'PATCH', path, { allowed_models: null, rpm: null, budget_usd: null });
      expect(clear.status, clear.text).to.equal(200);
      expect(clear.body).to.include({ allowed_models: null, rpm: null, budget_usd: null, budget: null });
      expect((await chat(k.key, 'sim-claude')).status).to.equal(200);
    } finally {
      await admin.close();
    }
  });
});
