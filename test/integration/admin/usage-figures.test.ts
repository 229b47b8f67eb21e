import { expect } from 'chai';
import { QueryTypes } from 'sequelize';
import { adminCall, buildAdminToken, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { env, resetSim } from '../../helpers/harness';
import { call, keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { searchOrg, search } from '../search/helpers';
import { Membership, Model, User } from '../../../shared/db/models';
import { db } from '../../../shared/db/sequelize';
import { usdMicros } from '../../../api/web/format';
import { splitPrices } from '../../../shared/catalog/tier-prices';

/** The dashboard's totals table: model, modality, requests, input, output, audio, cost (as the page writes it, `$0.02`). */
function dashboardTotals(page: string): Array<{ model: string; modality: string; requests: number; cost: string }> {
  const table = page.split('data-test="usage-totals"')[1].split('</table>')[0];
  return [...table.matchAll(/<tr><td data-label="Model">([^<]*)<\/td><td data-label="Modality">([^<]*)<\/td><td data-label="Requests">(\d+)<\/td>.*?<td data-label="Cost">([^<]+)<\/td><\/tr>/g)]
    .map((m) => ({ model: m[1], modality: m[2], requests: Number(m[3]), cost: m[4] }));
}

describe('usage figures: the dashboard, GET /admin/v1/billing/usage and the ledgers agree', () => {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  before(async () => (admin = await startAdmin()));
  after(() => admin.close());
  beforeEach(resetSim);

  it('chat, image and web search traffic: same figures on the dashboard, in the billing family and in a direct ledger query', async () => {
    const o = await searchOrg({ monthlyAllowance: 1, overageEnabled: true, overageMonthlyLimit: 10 });
    const chat = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'hello there' }] } });
    expect(chat.status, chat.text).to.equal(200);
    const image = await call('POST', '/v1/images/generations', { headers: keyHeader(o.key), json: { model: 'sim-image', prompt: 'a cat', n: 2 } });
    expect(image.status, image.text).to.equal(200);
    for (let i = 0; i < 3; i++) expect((await search(o.key, { query: `q${i}` })).status).to.equal(200); // 1 allowance, 2 overage
    await usageSettled();

    // the ledgers, queried directly
    const [ledger] = await db().query<{ requests: string; input: string; output: string; images: string }>(
      `SELECT count(*) AS requests, sum(input_tokens) AS input, sum(output_tokens) AS output, coalesce(sum((units->>'cost_micros')::numeric), 0) AS images
         FROM usage_events WHERE org_id = :org`, { type: QueryTypes.SELECT, replacements: { org: o.org.id } });
    const [searchLedger] = await db().query<{ overage: string }>(
      `SELECT coalesce(sum(price_micros), 0) AS overage FROM search_usage WHERE org_id = :org AND charge_class = 'overage'`, { type: QueryTypes.SELECT, replacements: { org: o.org.id } });
    expect(Number(searchLedger.overage)).to.be.greaterThan(0);
    expect(Number(ledger.images)).to.be.greaterThan(0);
    const { prices: chatPrices } = splitPrices((await Model.findOne({ where: { publicId: 'sim-chat' } }))!.prices);
    const [events] = await db().query<{ input: string; output: string }>(
      `SELECT sum(input_tokens) AS input, sum(output_tokens) AS output FROM usage_events WHERE org_id = :org AND model = 'sim-chat'`, { type: QueryTypes.SELECT, replacements: { org: o.org.id } });
    const chatCost = Number(events.input) * (chatPrices.input_token ?? 0) + Number(events.output) * (chatPrices.output_token ?? 0);
    const expectedCost = chatCost + Number(ledger.images) + Number(searchLedger.overage);

    // the billing family
    const { key } = await buildPlatformKey(['billing:read']);
    const billing = await adminCall(admin.url, key, 'GET', `/admin/v1/billing/usage?org_id=${o.org.id}`);
    expect(billing.status, billing.text).to.equal(200);
    expect(billing.body.totals).to.include({ requests: Number(ledger.requests), input_tokens: Number(ledger.input), output_tokens: Number(ledger.output) });
    expect(billing.body.totals.cost_micros).to.be.closeTo(expectedCost, 1e-6);
    const webSearch = billing.body.data.filter((r: { modality: string }) => r.modality === 'web_search');
    expect(webSearch.reduce((s: number, r: { cost_micros: number }) => s + r.cost_micros, 0)).to.equal(Number(searchLedger.overage));
    const overage = await adminCall(admin.url, key, 'GET', `/admin/v1/billing/search-overage?org_id=${o.org.id}`);
    expect(overage.body.overage_amount_micros).to.equal(Number(searchLedger.overage));

    // the dashboard, seen by a member (an impersonation session opens it)
    const user = await User.create({ email: `figures-${Date.now()}@example.com` });
    await Membership.create({ orgId: o.org.id, userId: user.id, role: 'member' });
    const { token } = await buildAdminToken();
    const ticket = await adminCall(admin.url, token, 'POST', `/admin/v1/users/${user.id}/impersonate`);
    const open = await fetch(`${env().gw.url}${ticket.body.path}`, { redirect: 'manual' });
    const cookie = open.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    const page = await fetch(`${env().gw.url}/dashboard/o/${o.org.slug}`, { headers: { cookie } });
    expect(page.status).to.equal(200);
    const shown = dashboardTotals(await page.text());
    const perModel = new Map<string, { requests: number; cost: number }>();
    for (const r of billing.body.data as Array<{ model: string; modality: string; requests: number; cost_micros: number }>) {
      const t = perModel.get(`${r.model}/${r.modality}`) ?? { requests: 0, cost: 0 };
      t.requests += r.requests; t.cost += r.cost_micros;
      perModel.set(`${r.model}/${r.modality}`, t);
    }
    expect(shown.map((r) => [`${r.model}/${r.modality}`, r.requests, r.cost]).sort())
      .to.deep.equal([...perModel].map(([k, t]) => [k, t.requests, usdMicros(t.cost)]).sort());
    expect(shown.map((r) => r.modality)).to.include.members(['chat', 'image', 'web_search']);
  });

  it('refuses a bad org_id with the JSON envelope', async () => {
    const { key } = await buildPlatformKey(['billing:read']);
    const r = await adminCall(admin.url, key, 'GET', '/admin/v1/billing/usage?org_id=nope');
    expect(r.status).to.equal(400);
    expect(r.body.error.code).to.equal('invalid_request');
  });
});
