import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { UsageEvent } from '../../../shared/db/models';
import { db } from '../../../shared/db/sequelize';
import { QueryTypes } from 'sequelize';
import { updateKeyControls } from '../../../shared/tenancy/ops';
import { ledgerSpend } from '../../../shared/limits/ledger-spend';
import { budgetStatus } from '../../../shared/limits/limits';
import { orgUsageFigures } from '../../../shared/billing/usage-figures';
import { usageBreakdown } from '../../../shared/billing/usage-breakdown';
import type { Budget } from '../../../shared/limits/controls';

const body = { model: 'sim-chat', max_tokens: 20, messages: [{ role: 'user', content: 'my own key pays' }] };

/**
 * A passthrough request (the caller's own provider key pays the upstream, docs/api.md) is metered but
 * "not priced as platform usage": its Activity row costs 0, and so must the usage figures billing
 * reads, the key's budget and the project's.
 */
describe('passthrough requests are not priced: usage figures and budgets', () => {
  beforeEach(resetSim);

  it("a passthrough request costs nothing on the usage figures, the Activity row or the key's budget, and a budget too small for a paid request still admits it", async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    // a budget that fits no paid request of this body (its worst case is about 40 µ$)
    const budget: Budget = { micros: 5, period: 'day' };
    await updateKeyControls(env().redis, o.keyId, { budgetMicros: budget.micros, budgetPeriod: budget.period });
    const paid = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: body });
    expect(paid.status, 'a paid request does not fit').to.equal(402);

    const own = await call('POST', '/v1/chat/completions', { headers: { ...keyHeader(o.key), authorization: 'Bearer sk-callers-own-key' }, json: body });
    expect(own.status, own.text).to.equal(200);
    const requestId = own.headers.get('x-service-request-id')!;
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { requestId } });
    expect(events.map((e) => [e.passthrough, e.inputTokens > 0, e.outputTokens > 0]), 'metered, with its tokens').to.deep.equal([[true, true, true]]);
    const [row] = await db().query<{ cost_micros: string }>('SELECT cost_micros FROM request_logs WHERE request_id = :requestId', { type: QueryTypes.SELECT, replacements: { requestId } });
    expect(Number(row?.cost_micros), 'the Activity row').to.equal(0);

    const figures = await orgUsageFigures(o.org.id, 1);
    expect(figures.totals.requests, 'the request shows in usage').to.equal(1);
    expect(figures.totals.cost_micros, 'the usage figures price it at nothing').to.equal(0);
    const byKey = await usageBreakdown(o.org.id, figures.from, figures.to, 'key');
    expect(byKey.map((r) => r.costMicros), 'the per-key breakdown').to.deep.equal([0]);
    expect(await ledgerSpend('key', o.keyId, null), "the key's spend").to.equal(0);
    const status = await waitFor(async () => {
      const s = await budgetStatus(env().redis, o.org.id, 'key', o.keyId, budget);
      return s.reserved_usd === 0 ? s : null;
    });
    expect(status, 'nothing left reserved').to.not.equal(null);
    expect(status!.spent_usd, "the key's budget").to.equal(0);
  });
});
