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
import { db } from '../../../shared/db/sequelize';

/** sim-claude's list prices (the default catalog), micro-dollars per token. */
const CLAUDE = { input: 3, output: 15 };

/**
 * Every reader of the usage ledger prices an event by its model (budget windows seeded from the
 * ledger, the usage figures billing reads, the Activity row). A request through a routing plan's
 * alias must be priced as the model the alias names: an alias is no catalog model (priced at
 * nothing), and an alias may shadow a catalog id (priced as the cheaper model it shadows).
 */
describe('key controls: usage through a routing plan is priced as the model its alias names', () => {
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
});
