import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { UsageEvent } from '../../../shared/db/models';
import { updateKeyControls } from '../../../shared/tenancy/ops';
import { ledgerSpend } from '../../../shared/limits/ledger-spend';
import { budgetStatus } from '../../../shared/limits/limits';
import type { Budget } from '../../../shared/limits/controls';
import { decide, requestIdOf, validBody } from '../systemone/helpers';

/**
 * Decision requests (`/v1/systemone`) spend a key's budget at the ledger's arithmetic (their tokens
 * at the model's list prices), so their worst case must be reserved like a chat request's: a budget
 * nearly used up must not admit any number of them at once.
 */
describe('key budgets: decision requests reserve their worst case', () => {
  beforeEach(resetSim);

  it('20 concurrent decisions against a budget that fits about three: the ledger never passes the budget, the rest 402 billed nothing', async function () {
    this.timeout(60_000);
    const o = await buildOrg(env().redis, { policies: { systemone: 'included' }, laneOverrides: { 'systemone:interactive': 100 } });
    // what one decision costs here, on a key without limits
    const first = await decide(o.key, validBody());
    expect(first.status, first.text).to.equal(200);
    await usageSettled();
    const one = await ledgerSpend('key', o.keyId, null);
    expect(one, 'a decision has a list-price cost').to.be.greaterThan(0);

    const budget: Budget = { micros: Math.ceil(one * 4.5), period: 'day' };
    await updateKeyControls(env().redis, o.keyId, { budgetMicros: budget.micros, budgetPeriod: budget.period });
    const replies = await Promise.all(Array.from({ length: 20 }, () => decide(o.key, validBody())));
    const ok = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 402);
    expect(ok.length + refused.length, replies.find((r) => r.status !== 200 && r.status !== 402)?.text).to.equal(20);
    for (const r of refused) expect(r.body.error.code).to.equal('budget_exceeded');
    expect(ok.length, 'some fit').to.be.greaterThan(0);
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { apiKeyId: o.keyId } });
    expect(events.map((e) => e.requestId).sort(), 'only the admitted decisions are billed').to.deep.equal([requestIdOf(first), ...ok.map(requestIdOf)].sort());
    const spent = await ledgerSpend('key', o.keyId, null);
    expect(spent, `${ok.length} decisions of ${one} µ$ each against ${budget.micros} µ$`).to.be.at.most(budget.micros);
    const status = await waitFor(async () => {
      const s = await budgetStatus(env().redis, o.org.id, 'key', o.keyId, budget);
      return s.reserved_usd === 0 ? s : null;
    });
    expect(status, 'reservations all settled').to.not.equal(null);
    expect(status!.spent_usd).to.be.closeTo(spent / 1e6, 1e-9);
  });
});
