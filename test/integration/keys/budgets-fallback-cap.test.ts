import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { completion, ScriptedUpstream } from '../../helpers/scripted-upstream';
import { updateKeyControls } from '../../../shared/tenancy/ops';
import { upsertModel } from '../../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { budgetStatus } from '../../../shared/limits/limits';
import { usageSettled } from '../../helpers/usage';

/**
 * A budget holds a chat request at the model's `max_output_tokens` when the request asks for more
 * (or names none). The model's own upstream cannot write more, but a fallback (or a pool deployment
 * serving a bigger model) can: the request went on with the caller's cap (or none), the fallback
 * wrote past the hold and the settle went past the budget. The upstream must be told the cap the
 * request was held at (docs/keys.md).
 */
describe('key controls: a budgeted request is sent with the output cap it was held at, so a fallback cannot settle above the hold', () => {
  let broken: ScriptedUpstream;
  let big: ScriptedUpstream;
  let model: string;
  before(async () => {
    broken = await ScriptedUpstream.start();
    broken.otherwise = () => ({ kind: 'json', status: 500, body: { error: { message: 'down' } } });
    big = await ScriptedUpstream.start();
    // the fallback writes what it was allowed to: the cap it was sent, else 5,000 tokens
    big.otherwise = (r) => {
      const cap = Number(r.body.max_completion_tokens ?? r.body.max_tokens ?? 5000);
      return { kind: 'json', body: completion({ content: 'long' }, 'length', { prompt_tokens: 10, completion_tokens: cap, total_tokens: 10 + cap }) };
    };
    const fallback = await big.model();
    model = await broken.model();
    // the model asked for publishes 100 output tokens at most, and falls back to one that writes more
    await upsertModel({ id: model, provider: model, upstream: 'up-model', capabilities: { chat: true, vision: true, tools: true, json_schema: true }, prices: { input_token: 1, output_token: 1 }, max_output_tokens: 100, fallbacks: [fallback] });
    await bumpEpoch(env().redis);
  });
  after(async () => {
    await broken.close();
    await big.close();
  });
  beforeEach(() => {
    broken.reset();
    big.reset();
  });

  const chat = (key: string, extra: Record<string, unknown>) =>
    call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model, messages: [{ role: 'user', content: 'hi' }], ...extra } });

  for (const [name, extra] of [
    ['a cap above the model\'s', { max_tokens: 8000 }],
    ['a max_completion_tokens above it', { max_completion_tokens: 9000 }],
    ['no cap', {}],
  ] as Array<[string, Record<string, unknown>]>) {
    it(`${name}: the fallback is sent 100 and the key's spend stays within its budget`, async () => {
      const o = await buildOrg(env().redis);
      // $0.001: room for one request held at 100 output tokens (about 120 micros), far from 5,000
      const budget = { micros: 1000, period: 'day' as const };
      await updateKeyControls(env().redis, o.keyId, { budgetMicros: budget.micros, budgetPeriod: budget.period });
      const r = await chat(o.key, extra);
      expect(r.status, r.text).to.equal(200);
      expect(r.headers.get('x-service-fallback-model'), 'served by the fallback').to.be.a('string');
      await usageSettled();
      const st = await budgetStatus(env().redis, o.org.id, 'key', o.keyId, budget);
      expect(st.spent_usd * 1e6, 'settled within the budget').to.be.at.most(budget.micros);
      const sent = big.received.map((x) => Math.max(Number(x.body.max_completion_tokens ?? 0), Number(x.body.max_tokens ?? 0)));
      expect(sent, 'the cap it was held at').to.deep.equal([100]);
    });
  }

  it('a key without a budget sends the request as asked', async () => {
    const o = await buildOrg(env().redis);
    await updateKeyControls(env().redis, o.keyId, { rpm: 100 });
    expect((await chat(o.key, { max_tokens: 8000 })).status).to.equal(200);
    expect(big.received.map((x) => x.body.max_tokens)).to.deep.equal([8000]);
  });
});
