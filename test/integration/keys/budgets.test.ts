import { expect } from 'chai';
import { env, resetSim, startGateway, type TestGateway } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { outboxDuring, usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { Project, UsageEvent } from '../../../shared/db/models';
import { createApiKey, updateKeyControls } from '../../../shared/tenancy/ops';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { ledgerSpend } from '../../../shared/limits/ledger-spend';
import { budgetStatus } from '../../../shared/limits/limits';

const body = { model: 'sim-chat', max_tokens: 20, messages: [{ role: 'user', content: 'budget test' }] };
const chat = (key: string, base?: string) => call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: body, base });

describe('key controls: budgets that cannot be overspent', () => {
  let second: TestGateway;
  before(async () => {
    second = await startGateway();
  });
  after(async () => {
    await second.close();
  });
  beforeEach(resetSim);

  it('200 concurrent requests over two web pods never spend more than a budget that fits about 40; the refused answer 402 and bill nothing', async function () {
    this.timeout(120_000);
    const o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 400 } });
    // worst case of one request: ~15 counted input tokens at 0.5 µ$ + 20 output tokens at 1.5 µ$ ≈ 38 µ$
    const budgetMicros = 1500;
    await updateKeyControls(env().redis, o.keyId, { budgetMicros, budgetPeriod: 'day' });
    const replies = await Promise.all(Array.from({ length: 200 }, (_, i) => chat(o.key, i % 2 ? second.url : undefined)));
    const ok = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 402);
    expect(ok.length + refused.length, JSON.stringify(replies.find((r) => r.status !== 200 && r.status !== 402)?.body)).to.equal(200);
    // settlements free what the real costs leave of the worst cases while others are still arriving
    expect(ok.length).to.be.within(20, 120);
    for (const r of refused) {
      expect(r.body.error.code).to.equal('budget_exceeded');
      expect(r.body.error.message).to.contain('$0.0015 per day').and.to.contain('resets at');
    }
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { apiKeyId: o.keyId } });
    expect(events.map((e) => e.requestId).sort(), 'only the admitted requests are billed').to.deep.equal(ok.map((r) => r.headers.get('x-service-request-id')).sort());
    const spent = await ledgerSpend('key', o.keyId, null);
    expect(spent).to.be.greaterThan(0);
    expect(spent, 'the ledger never exceeds the budget').to.be.at.most(budgetMicros);
    // every reservation settled to the ledger's figure
    const status = await waitFor(async () => {
      const s = await budgetStatus(env().redis, o.org.id, 'key', o.keyId, { micros: budgetMicros, period: 'day' });
      return s.reserved_usd === 0 ? s : null;
    });
    expect(status, 'reservations all settled').to.not.equal(null);
    expect(status!.spent_usd).to.be.closeTo(spent / 1e6, 1e-9);
    expect(status!.remaining_usd).to.be.closeTo((budgetMicros - spent) / 1e6, 1e-9);
  });

  it('a client that leaves after the worker published (and billed) its answer: the budget counts that cost', async function () {
    this.timeout(20_000);
    const o = await buildOrg(env().redis);
    const budget = { micros: 100_000, period: 'day' as const };
    await updateKeyControls(env().redis, o.keyId, { budgetMicros: budget.micros, budgetPeriod: budget.period });
    // the pod holds the worker's final message until its client has gone (the client leaves between
    // the worker's publish and the pod's write of the answer)
    const hub = env().gw.ctx.replies as unknown as { onMessage(raw: string): void };
    const original = hub.onMessage;
    const client = new AbortController();
    hub.onMessage = function (this: unknown, raw: string) {
      if ((JSON.parse(raw) as { t: string }).t !== 'r') return original.call(this, raw);
      client.abort();
      setTimeout(() => original.call(this, raw), 300);
    };
    try {
      // the usage event is drained only after the pod has dealt with its gone client
      const { records } = await outboxDuring(async () => {
        const sent = await fetch(`${env().gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: client.signal,
        }).catch((e: unknown) => e);
        expect(sent).to.be.instanceOf(Error);
        await new Promise((r) => setTimeout(r, 500));
      });
      expect(records.filter((u) => u.apiKeyId === o.keyId), 'the worker billed it').to.have.length(1);
    } finally {
      hub.onMessage = original;
    }
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { apiKeyId: o.keyId } });
    expect(events, 'the worker was first: billed').to.have.length(1);
    const spent = await ledgerSpend('key', o.keyId, null);
    expect(spent).to.be.greaterThan(0);
    const status = await waitFor(async () => {
      const st = await budgetStatus(env().redis, o.org.id, 'key', o.keyId, budget);
      return st.reserved_usd === 0 ? st : null;
    });
    expect(status, 'the hold settled').to.not.equal(null);
    expect(status!.spent_usd, 'the budget counts the billed cost').to.be.closeTo(spent / 1e6, 1e-9);
  });

  it('gives a failed request its reservation back, and a project budget refuses every key of the project', async () => {
    const o = await buildOrg(env().redis);
    await updateKeyControls(env().redis, o.keyId, { budgetMicros: 60, budgetPeriod: 'total' }); // one worst case fits, two do not
    env().sim.knobs.set('sim-chat-1', { status: 500 });
    const failed = await chat(o.key);
    expect(failed.status).to.be.at.least(500);
    env().sim.knobs.reset();
    const after = await chat(o.key);
    expect(after.status, 'the failed request reserved nothing that stays').to.equal(200);
    await usageSettled();
    const status = await waitFor(async () => {
      const s = await budgetStatus(env().redis, o.org.id, 'key', o.keyId, { micros: 60, period: 'total' });
      return s.reserved_usd === 0 ? s : null;
    });
    expect(status!.spent_usd).to.be.greaterThan(0);
    const third = await chat(o.key);
    expect(third.status).to.equal(402);
    expect(third.body.error.message).to.contain('in total').and.to.contain('does not reset');

    const p = await Project.findOne({ where: { orgId: o.org.id } });
    await p!.update({ budgetMicros: 10, budgetPeriod: 'month' });
    await bumpEpoch(env().redis);
    const projectKey = await createApiKey(env().redis, { orgId: o.org.id, projectId: p!.id });
    const r = await chat(projectKey.key);
    expect(r.status).to.equal(402);
    expect(r.body.error.message).to.contain("project's budget");
  });

  it('reserves every completion a request asks for (n, best_of, a batch of prompts): what cannot fit is 402 before any upstream call', async () => {
    const o = await buildOrg(env().redis);
    // one worst case (~15 input tokens at 0.5 µ$, 20 output at 1.5 µ$: about 38 µ$) fits in 100 µ$; eight do not
    await updateKeyControls(env().redis, o.keyId, { budgetMicros: 100, budgetPeriod: 'total' });
    env().sim.log.entries.length = 0;
    const refusedBodies: Array<[string, Record<string, unknown>]> = [
      ['/v1/chat/completions', { ...body, n: 8 }],
      ['/v1/completions', { model: 'sim-chat', max_tokens: 20, prompt: Array.from({ length: 8 }, () => 'budget test') }],
      ['/v1/completions', { model: 'sim-chat', max_tokens: 20, prompt: 'budget test', n: 1, best_of: 8 }],
    ];
    for (const [path, json] of refusedBodies) {
      const r = await call('POST', path, { headers: keyHeader(o.key), json });
      expect(r.status, `${path} ${JSON.stringify(json).slice(0, 80)}: ${r.text}`).to.equal(402);
      expect(r.body.error.code).to.equal('budget_exceeded');
    }
    expect(env().sim.log.entries, 'no upstream call').to.have.length(0);
    expect((await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { ...body, n: 2 } })).status, 'two completions fit').to.equal(200);
  });

  it('reserves embeddings at their counted input and images at their price, and refuses what does not fit', async () => {
    const o = await buildOrg(env().redis);
    // sim-embed: 0.02 µ$ an input token; sim-image: priced per image
    await updateKeyControls(env().redis, o.keyId, { budgetMicros: 1, budgetPeriod: 'month' });
    const small = await call('POST', '/v1/embeddings', { headers: keyHeader(o.key), json: { model: 'sim-embed', input: 'a few words' } });
    expect(small.status, small.text).to.equal(200);
    const big = await call('POST', '/v1/embeddings', { headers: keyHeader(o.key), json: { model: 'sim-embed', input: 'word '.repeat(200) } });
    expect(big.status).to.equal(402);
    expect(big.body.error.code).to.equal('budget_exceeded');
    env().sim.log.entries.length = 0;
    const image = await call('POST', '/v1/images/generations', { headers: keyHeader(o.key), json: { model: 'sim-image', prompt: 'a cat', size: '256x256' } });
    expect(image.status, image.text).to.equal(402);
    expect(env().sim.log.entries, 'no upstream call').to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { apiKeyId: o.keyId } })).to.equal(1);
  });
});
