import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { startAdmin } from '../../helpers/admin';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { consoleAs, buildWebMember, dashboardAs, type WebClient } from '../../helpers/web-client';
import { ApiKey, Membership, Organization, Project, SearchSetting } from '../../../shared/db/models';
import { createApiKey } from '../../../shared/tenancy/ops';

const section = (page: string, name: string) => new RegExp(`data-section="${name}"[\\s\\S]*?</div>`).exec(page)?.[0] ?? '';

describe('operator console: an organization’s page', () => {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  let web: WebClient;
  before(async () => {
    admin = await startAdmin();
    web = await consoleAs(admin.url);
  });
  after(() => admin.close());
  beforeEach(resetSim);

  it('is linked from the list and shows members, keys (never a secret), projects, 30-day usage, search settings and lane overrides', async () => {
    const o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 3 } });
    const owner = await buildWebMember(o.org.id, 'owner');
    const member = await buildWebMember(o.org.id, 'member');
    const archived = await Project.create({ orgId: o.org.id, name: 'Old things', slug: 'old', archivedAt: new Date(), budgetMicros: 5_000_000, budgetPeriod: 'month' });
    const own = await createApiKey(env().redis, { orgId: o.org.id, userId: member.id, projectId: archived.id, name: 'member-key' });
    await ApiKey.update({ rpm: 17, tpm: 9000, budgetMicros: 2_500_000, budgetPeriod: 'day', allowedModels: ['sim-chat'] }, { where: { id: own.id } });
    await Membership.update({ rpm: 4, budgetMicros: 1_000_000, budgetPeriod: 'month', allowedModels: ['sim-chat', 'sim-embed'] }, { where: { orgId: o.org.id, userId: member.id } });
    await SearchSetting.create({ orgId: o.org.id, defaultProvider: 'brave-sim', allowedProviders: ['brave-sim'], monthlyAllowance: 123, overageEnabled: true, overageMonthlyLimit: 456 });
    for (let i = 0; i < 2; i++) {
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] } });
      expect(r.status).to.equal(200);
    }
    await usageSettled();

    const list = await web.get('/');
    expect(list.status).to.equal(200);
    expect(list.text).to.include(`<a href="/orgs/${o.org.id}">${o.org.name}</a>`);

    const r = await web.get(`/orgs/${o.org.id}`);
    expect(r.status, r.text.slice(0, 300)).to.equal(200);
    const page = r.text;
    const members = section(page, 'members');
    expect(members).to.match(new RegExp(`${owner.email}</td><td data-label="Role">owner</td><td data-label="Limits" data-test="member-limits">—<`));
    // a member's limits (every key they own carries them), written as a key's
    expect(members).to.match(new RegExp(`${member.email}</td><td data-label="Role">member</td><td data-label="Limits" data-test="member-limits">models: sim-chat, sim-embed · 4 req/min · \\$1.00 per month<`));

    const keys = section(page, 'keys');
    const first = (await ApiKey.findByPk(o.keyId))!;
    expect(keys).to.match(new RegExp(`data-key-id="${o.keyId}"[\\s\\S]*?<code>${first.prefix}…</code>[\\s\\S]*?organization-wide[\\s\\S]*?active`));
    expect(keys).to.match(new RegExp(`data-key-id="${own.id}"[\\s\\S]*?member-key[\\s\\S]*?${member.email}[\\s\\S]*?Old things[\\s\\S]*?models: sim-chat · 17 req/min, 9,000 tok/min · \\$2.50 per day`));
    expect(page).to.not.include(o.key);
    expect(page).to.not.include(own.key);
    expect(page).to.not.include(first.keyHash);

    const projects = section(page, 'projects');
    expect(projects).to.match(/Proj<\/td><td data-label="Slug"><code class="id">proj<\/code>[\s\S]*?active/);
    expect(projects).to.match(/Old things[\s\S]*?\$5.00 per month[\s\S]*?archived/);

    expect(section(page, 'usage')).to.match(/<p>2 requests · [1-9][\d,]* tokens · /);
    expect(section(page, 'usage')).to.include('<svg');
    expect(section(page, 'search')).to.include('Default provider: brave-sim · allowed: brave-sim · monthly allowance: 123 · overage: on · monthly limit: 456');
    expect(section(page, 'lanes')).to.match(new RegExp(`action="/orgs/${o.org.id}/lanes"[\\s\\S]*?value="chat:interactive=3"`));

    // the embedded form saves like the list's
    const saved = await web.post(`/orgs/${o.org.id}/lanes`, { lane_overrides: 'chat:interactive=5' });
    expect(saved.status).to.equal(303);
    expect((await Organization.findByPk(o.org.id))!.laneOverrides).to.deep.equal({ 'chat:interactive': 5 });
  });

  it('writes counts with thousands separators as the dashboard does: tokens on the list and the page, rate limits, an unnamed key', async () => {
    const o = await buildOrg(env().redis);
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'many words '.repeat(900) }] } });
    expect(r.status, r.text).to.equal(200);
    await usageSettled();
    await ApiKey.update({ rpm: 1500, tpm: 250000 }, { where: { id: o.keyId } });
    const row = /<a href="\/orgs\/[^"]+">([^<]+)<\/a>[\s\S]*?<\/tr>/g;
    const list = [...(await web.get('/')).text.matchAll(row)].find((m) => m[1] === o.org.name)![0];
    const tokens = /data-label="Tokens \(30 d\)">([^<]+)</.exec(list)![1];
    expect(tokens).to.match(/^\d{1,3}(,\d{3})+$/); // over a thousand, grouped
    const page = (await web.get(`/orgs/${o.org.id}`)).text;
    expect(section(page, 'usage')).to.match(new RegExp(` requests? · ${tokens} tokens · `));
    expect(section(page, 'keys')).to.match(new RegExp(`data-key-id="${o.keyId}"><td><span class="muted">unnamed</span>[\\s\\S]*?1,500 req/min, 250,000 tok/min`));
  });

  it('answers 404 not_found for an unknown or malformed id', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'nope']) {
      const r = await web.request('GET', `/orgs/${id}`, { headers: { accept: 'application/json' } });
      expect(r.status).to.equal(404);
      expect(r.body.error.code).to.equal('not_found');
    }
  });

  it("writes figures as the dashboard does (a budget under a cent to its third significant digit, 'in total'; the usage cost, $0.00 for none); an org without members, keys or projects says so, in the console and the dashboard", async () => {
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    expect((await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] } })).status).to.equal(200);
    await usageSettled();
    await ApiKey.update({ budgetMicros: 20, budgetPeriod: 'total' }, { where: { id: o.keyId } });
    await Project.update({ budgetMicros: 1500, budgetPeriod: 'day' }, { where: { id: o.project.id } });
    const page = (await web.get(`/orgs/${o.org.id}`)).text;
    expect(section(page, 'keys')).to.include('$0.00002 in total');
    expect(section(page, 'projects')).to.include('$0.0015 per day');
    const dashboard = (await (await dashboardAs(owner)).get(`/dashboard/o/${o.org.slug}`)).text;
    const cost = /data-test="usage-total-cost">([^<]+)</.exec(dashboard)![1];
    expect(cost).to.match(/^\$0\.0000[1-9]\d{0,2}$/);
    expect(section(page, 'usage')).to.include(` · ${cost}</p>`);

    const bare = await Organization.create({ name: 'Bare', slug: `bare-${o.org.slug}` });
    const empty = (await web.get(`/orgs/${bare.id}`)).text;
    expect(section(empty, 'members')).to.include('No members.');
    expect(section(empty, 'keys')).to.include('No API keys.');
    expect(section(empty, 'projects')).to.include('No projects.');
    expect(section(empty, 'usage')).to.include(' · $0.00</p>');
    const bareOwner = await dashboardAs(await buildWebMember(bare.id, 'owner'));
    expect((await bareOwner.get(`/dashboard/o/${bare.slug}/keys`)).text).to.include('No API keys yet');
    expect((await bareOwner.get(`/dashboard/o/${bare.slug}/projects`)).text).to.include('No projects yet');
    const audit = await web.get(`/audit?q=${o.org.slug}-nothing-matches`);
    expect(audit.text).to.include('No audit entries match.');
  });
});
