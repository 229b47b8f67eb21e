import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { buildWebMember, dashboardAs } from '../../helpers/web-client';
import { usageSettled } from '../../helpers/usage';
import { ApiKey } from '../../../shared/db/models';

const newKeyOf = (page: string) => /data-test="new-key">([^<]+)</.exec(page)?.[1] ?? '';
const cell = (page: string, keyId: string, test: string) => new RegExp(`data-key-id="${keyId}"[\\s\\S]*?data-test="${test}">([^<]*)<`).exec(page)?.[1];

describe("key controls on the dashboard's keys page", () => {
  beforeEach(resetSim);

  it('an owner creates a key with models, limits, a budget and an expiry, edits them, and sees spend against the budget', async () => {
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    const web = await dashboardAs(owner);
    const page = `/dashboard/o/${o.org.slug}/keys`;
    await web.get(page);
    const created = await web.post(page, { name: 'limited', models: 'sim-chat, sim-embed', rpm: '30', tpm: '', budget_usd: '0.5', budget_period: 'day', expires_at: '2031-02-03T04:05:06Z' });
    expect(created.status, created.text.slice(0, 300)).to.equal(201);
    const raw = newKeyOf(created.text);
    const row = (await ApiKey.findOne({ where: { orgId: o.org.id, name: 'limited' } }))!;
    expect(row.allowedModels).to.deep.equal(['sim-chat', 'sim-embed']);
    expect(row).to.include({ rpm: 30, tpm: null, budgetMicros: 500_000, budgetPeriod: 'day', createdBy: owner.id });
    expect(row.expiresAt!.toISOString()).to.equal('2031-02-03T04:05:06.000Z');

    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(raw), json: { model: 'sim-chat', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] } });
    expect(r.status).to.equal(200);
    await usageSettled();
    const shown = (await web.get(page)).text;
    expect(cell(shown, row.id, 'key-models')).to.equal('sim-chat, sim-embed');
    expect(cell(shown, row.id, 'key-budget')).to.match(/^\$0\.0000[1-9]\d{0,2} spent, \$0\.00 reserved of \$0\.50 per day; \$0\.\d\d left$/);

    // a bad value is refused naming the field, and nothing changes
    const bad = await web.post(`${page}/${row.id}/controls`, { models: 'sim-chat', budget_usd: '-1', budget_period: 'day' }, { json: true });
    expect(bad.status).to.equal(400);
    expect((bad.body as { error: { message: string } }).error.message).to.equal('Budget (USD) must be greater than or equal to 0'); // the form's label
    expect((await ApiKey.findByPk(row.id))!.budgetMicros).to.equal(500_000);

    const saved = await web.post(`${page}/${row.id}/controls`, { models: '', rpm: '5', tpm: '1000', budget_usd: '', budget_period: 'month', expires_at: '' });
    expect(saved.status).to.equal(303);
    expect((await web.get(String(saved.headers.location))).text).to.contain('Limits saved.');
    const edited = (await ApiKey.findByPk(row.id))!;
    expect(edited).to.include({ allowedModels: null, rpm: 5, tpm: 1000, budgetMicros: null, expiresAt: null });
  });

  it("a member's create form has no limits, and a member cannot change a key's limits", async () => {
    const o = await buildOrg(env().redis);
    const member = await buildWebMember(o.org.id, 'member');
    const web = await dashboardAs(member);
    const page = await web.get(`/dashboard/o/${o.org.slug}/keys`);
    expect(page.text).not.to.contain('name="budget_usd"');
    const r = await web.post(`/dashboard/o/${o.org.slug}/keys/${o.keyId}/controls`, { rpm: '1' }, { json: true });
    expect(r.status).to.equal(403);
    expect((await ApiKey.findByPk(o.keyId))!.rpm).to.equal(null);
  });
});
