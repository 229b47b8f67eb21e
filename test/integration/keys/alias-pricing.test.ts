import { expect } from 'chai';
import { QueryTypes } from 'sequelize';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { RoutingPlan, UsageEvent } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { updateKeyControls } from '../../../shared/tenancy/ops';
import { ledgerSpend } from '../../../shared/limits/ledger-spend';
import { orgUsageFigures } from '../../../shared/billing/usage-figures';
import { usageBreakdown } from '../../../shared/billing/usage-breakdown';
import { db } from '../../../shared/db/sequelize';

/** sim-claude's and sim-chat's list prices (the default catalog), micro-dollars per token. */
const CLAUDE = { input: 3, output: 15 };
const CHAT = { input: 0.5, output: 1.5 };

/**
 * Every reader of the usage ledger prices an event by its model (budget windows seeded from the
 * ledger, the usage figures billing reads, the Activity row). A request through a routing plan's
 * alias must be priced as the model the alias names: an alias is no catalog model (priced at
 * nothing), and an alias may shadow a catalog id (priced as the cheaper model it shadows).
 */
describe('key controls: usage is priced as the catalog model it was served as (a routing plan\'s alias, a -background variant)', () => {
  beforeEach(resetSim);

  it('the ledger, the usage figures and the Activity rows price it, and a budget seeded from the ledger counts it', async () => {
    const o = await buildOrg(env().redis);
    // `fast` is no catalog model; `sim-chat` (0.5/1.5 µ$) is, and this plan sends it to sim-claude (3/15 µ$)
    const plan = await RoutingPlan.create({ orgId: o.org.id, name: 'priced', modelMap: { fast: 'sim-claude', 'sim-chat': 'sim-claude' }, projectId: null } as never);
    await bumpEpoch(env().redis);
    const ask = (model: string) =>
      call('POST', `/r/${plan.id}/v1/chat/completions`, { headers: keyHeader(o.key), json: { model, max_tokens: 10, messages: [{ role: 'user', content: 'priced as what it names' }] } });
    for (const model of ['fast', 'sim-chat']) {
      const r = await ask(model);
      expect([r.status, r.body.model], 'answered with the id asked for').to.deep.equal([200, model]);
    }
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { apiKeyId: o.keyId } });
    expect(events).to.have.length(2);
    const cost = events.reduce((n, e) => n + e.inputTokens * CLAUDE.input + e.outputTokens * CLAUDE.output, 0);
    expect(cost).to.be.greaterThan(0);
    expect(await ledgerSpend('key', o.keyId, null), "the key's spend").to.equal(cost);
    expect((await orgUsageFigures(o.org.id, 1)).totals.cost_micros, 'the usage figures').to.equal(cost);
    const [row] = await db().query<{ cost: string }>('SELECT sum(cost_micros) AS cost FROM request_logs WHERE api_key_id = :k', { type: QueryTypes.SELECT, replacements: { k: o.keyId } });
    expect(Number(row.cost), 'the Activity rows').to.equal(cost);
    // a total budget set now is seeded from the ledger: what is left is under one more request's worst case
    await updateKeyControls(env().redis, o.keyId, { budgetMicros: cost + 100, budgetPeriod: 'total' });
    const over = await ask('fast');
    expect([over.status, over.body.error?.code], 'the aliased spend counts').to.deep.equal([402, 'budget_exceeded']);
  });

  it("a -background variant is priced at its base's prices on the usage figures and their per-key breakdown, as on the ledger", async () => {
    const o = await buildOrg(env().redis);
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat-background', max_tokens: 10, messages: [{ role: 'user', content: 'later is fine' }] } });
    expect(r.status, r.text).to.equal(200);
    await usageSettled();
    const [e] = await UsageEvent.findAll({ where: { apiKeyId: o.keyId } });
    const cost = e.inputTokens * CHAT.input + e.outputTokens * CHAT.output;
    expect(cost).to.be.greaterThan(0);
    expect(await ledgerSpend('key', o.keyId, null), 'the ledger').to.equal(cost);
    const figures = await orgUsageFigures(o.org.id, 1);
    expect(figures.totals.cost_micros, 'the usage figures').to.equal(cost);
    expect((await usageBreakdown(o.org.id, figures.from, figures.to, 'key')).map((k) => k.costMicros), 'per key').to.deep.equal([cost]);
  });
});
