import { expect } from 'chai';
import { QueryTypes } from 'sequelize';
import { env, resetSim } from '../../helpers/harness';
import { call, keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { buildOrg } from '../../helpers/factories';
import { buildWebMember, dashboardAs } from '../../helpers/web-client';
import { Model, Project } from '../../../shared/db/models';
import { createApiKey } from '../../../shared/tenancy/ops';
import { addDays, utcDay } from '../../../shared/metering/rollups';
import { db } from '../../../shared/db/sequelize';
import { usdMicros } from '../../../api/web/format';
import { splitPrices } from '../../../shared/catalog/tier-prices';

/** A breakdown table of the usage page: label → [requests, input, output, cost]. */
function table(page: string, test: string): Map<string, [number, number, number, string]> {
  const part = page.split(`data-test="${test}"`)[1]?.split('</table>')[0] ?? '';
  return new Map([...part.matchAll(/<tr><td data-label="[^"]+">([^<]*)<\/td><td data-label="Requests">(\d+)<\/td><td data-label="Input tokens">(\d+)<\/td><td data-label="Output tokens">(\d+)<\/td><td data-label="Cost">([^<]+)<\/td><\/tr>/g)]
    .map((m) => [m[1].replace(/&#39;/g, "'"), [Number(m[2]), Number(m[3]), Number(m[4]), m[5]]]));
}

const chat = (key: string, content: string) =>
  call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model: 'sim-chat', messages: [{ role: 'user', content }] } });

describe('dashboard usage page: a date range and breakdowns by key, project and model', () => {
  beforeEach(resetSim);

  it('shows each key and project with the ledger figures, priced at list prices; a range without the traffic shows none', async () => {
    const o = await buildOrg(env().redis);
    const other = await Project.create({ orgId: o.org.id, name: 'Second project', slug: 'second' });
    const bound = await createApiKey(env().redis, { orgId: o.org.id, projectId: other.id, name: 'bound key' });
    for (const [key, text] of [[o.key, 'hello'], [o.key, 'hello again there'], [bound.key, 'a longer message for the bound key']]) {
      const r = await chat(key, text);
      expect(r.status, r.text).to.equal(200);
    }
    await usageSettled();
    const member = await buildWebMember(o.org.id, 'member');
    const web = await dashboardAs(member);
    const today = utcDay(new Date());

    const page = await web.get(`/dashboard/o/${o.org.slug}?from=${addDays(today, -3)}&to=${today}`);
    expect(page.status, page.text.slice(0, 300)).to.equal(200);
    expect(page.text).to.include(`value="${addDays(today, -3)}"`); // the range form shows the range
    // the cost chart's y axis says its unit; the requests chart's has none
    const axis = (title: string) => [...(page.text.split(`${title}</h2>`)[1] ?? '').split('</svg>')[0].matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    expect(axis('Cost per day (USD, list prices)')).to.have.length(3).and.satisfy((xs: string[]) => xs.every((x) => /^\$\d/.test(x)));
    expect(axis('Requests per day')).to.have.length(3).and.satisfy((xs: string[]) => xs.every((x) => /^\d/.test(x)));
    const { prices } = splitPrices((await Model.findOne({ where: { publicId: 'sim-chat' } }))!.prices);
    const ledger = await db().query<{ key: string; project: string | null; n: string; input: string; output: string }>(
      `SELECT api_key_id AS key, project_id AS project, count(*) AS n, sum(input_tokens) AS input, sum(output_tokens) AS output
         FROM usage_events WHERE org_id = :org GROUP BY 1, 2`, { type: QueryTypes.SELECT, replacements: { org: o.org.id } });
    expect(ledger).to.have.length(2);
    // cost at list prices in micro-dollars, as the pages write it (usdMicros: cents, or a few millionths to three significant digits)
    const micros = (l: (typeof ledger)[number]) => Number(l.input) * prices.input_token + Number(l.output) * prices.output_token;
    const expected = (l: (typeof ledger)[number]): [number, number, number, string] => [Number(l.n), Number(l.input), Number(l.output), usdMicros(micros(l))];
    const unbound = ledger.find((l) => l.key === o.keyId)!;
    const boundRow = ledger.find((l) => l.key === bound.id)!;
    expect(unbound.n).to.equal('2');
    expect(boundRow.project).to.equal(other.id);

    const byKey = table(page.text, 'usage-by-key');
    expect([...byKey].find(([k]) => k.startsWith('bound key ('))?.[1]).to.deep.equal(expected(boundRow));
    expect([...byKey].find(([k]) => k.startsWith('unnamed ('))?.[1]).to.deep.equal(expected(unbound));
    expect(byKey.size).to.equal(2);
    const byProject = table(page.text, 'usage-by-project');
    expect(byProject.get('Second project')).to.deep.equal(expected(boundRow));
    expect(byProject.get('(none)')).to.deep.equal(expected(unbound));
    expect(byProject.size).to.equal(2);
    // the model table, the headline totals and the hover titles agree with the breakdowns
    const totalCost = usdMicros(micros(unbound) + micros(boundRow));
    expect(totalCost).to.match(/^\$0\.0000[1-9]\d{0,2}$/); // a few millionths, not $0.00
    expect(page.text).to.match(new RegExp(`data-test="usage-total-requests">3<`));
    expect(page.text).to.include(`data-test="usage-total-cost">${totalCost}<`);
    expect(page.text).to.include(`<title>${today} sim-chat (chat): 3</title>`);
    expect(page.text).to.include(`<title>${today} sim-chat (chat): ${totalCost}</title>`);

    // yesterday alone: nothing
    const before = await web.get(`/dashboard/o/${o.org.slug}?from=${addDays(today, -1)}&to=${addDays(today, -1)}`);
    expect(before.status).to.equal(200);
    expect(table(before.text, 'usage-by-key').size).to.equal(0);
    expect(table(before.text, 'usage-by-project').size).to.equal(0);
    expect(before.text).to.include('data-test="usage-total-requests">0<').and.include('data-test="usage-total-cost">$0.00<');
    expect(before.text).not.to.include('sim-chat');
    // empty charts say why, and offer no bar to hover
    expect(before.text).to.include('No traffic in this range: the charts are empty.').and.not.include('Hover (or tap)');
    expect(page.text).to.include('Hover (or tap) a bar for its figure.').and.not.include('the charts are empty');

    // the default range is the last 30 days, ending today
    const def = await web.get(`/dashboard/o/${o.org.slug}`);
    expect(def.text).to.include(`Usage, ${addDays(today, -29)} to ${today} (UTC)`);
    expect(table(def.text, 'usage-by-key').size).to.equal(2);
  });

  it('refuses a range that is not dates, before 1970, reversed, in the future or longer than 366 days: 400 invalid_request naming the field', async () => {
    const o = await buildOrg(env().redis);
    const web = await dashboardAs(await buildWebMember(o.org.id, 'owner'));
    const today = utcDay(new Date());
    const cases: Array<[string, string]> = [
      [`from=yesterday`, 'from'],
      [`to=2026-02-30`, 'to'],
      [`from=${today}&to=${addDays(today, -1)}`, 'from'],
      [`to=${addDays(today, 1)}`, 'to'],
      [`from=${addDays(today, -366)}&to=${today}`, 'from'],
      [`from=<script>`, 'from'],
      // the default range of a `to` in year 1 would begin in year 0, which PostgreSQL refuses (a 500 the fuzz found)
      [`to=0001-01-01`, 'to'],
      [`from=1969-12-31`, 'from'],
    ];
    for (const [q, field] of cases) {
      const r = await web.request('GET', `/dashboard/o/${o.org.slug}?${q}`, { headers: { accept: 'application/json' } });
      expect(r.status, q).to.equal(400);
      expect(r.body.error.code, q).to.equal('invalid_request');
      expect(r.body.error.message, q).to.match(new RegExp(`^${field}:`));
      const page = await web.get(`/dashboard/o/${o.org.slug}?${q}`);
      expect(page.status, q).to.equal(400);
      expect(page.text, q).not.to.include('<script>');
      expect(page.text, q).not.to.match(/at \w+ \(|node_modules/);
      // a browser gets the range form back with what was asked and the message at the field, over the default range
      expect(page.text, q).to.match(new RegExp(`data-test="field-error-${field}">${field}:`));
      expect(page.text, q).to.match(new RegExp(`name="${field}" value="[^"]*"[^>]*aria-invalid="true"`));
      const asked = new URLSearchParams(q).get(field)!;
      expect(page.text, q).to.include(`name="${field}" value="${asked.replace(/</g, '&lt;').replace(/>/g, '&gt;')}"`);
      expect(page.text, q).to.include('data-test="requests-chart"');
    }
    // the longest allowed range is fine
    expect((await web.get(`/dashboard/o/${o.org.slug}?from=${addDays(today, -365)}&to=${today}`)).status).to.equal(200);
  });
});
