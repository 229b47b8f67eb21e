import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { completion, ScriptedUpstream } from '../../helpers/scripted-upstream';
import { createApiKey, updateKeyControls } from '../../../shared/tenancy/ops';
import { Project } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';

const legacy = { id: 'cmpl-s', object: 'text_completion', created: 1, model: 'up-model', choices: [{ index: 0, text: 'ok', logprobs: null, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } };

/**
 * A budget holds a request at its worst case; for a model whose catalog entry publishes no
 * `max_output_tokens`, a request naming no cap is held at 4,096 output tokens, so the upstream must be
 * told that cap, or a longer answer settles above the hold and past the budget (docs/keys.md).
 */
describe('key controls: a budgeted request on a model without max_output_tokens tells the upstream the cap it was held at', () => {
  let up: ScriptedUpstream;
  let model: string;
  before(async () => {
    up = await ScriptedUpstream.start();
    up.otherwise = (r) => ({ kind: 'json', body: r.path.endsWith('/chat/completions') ? completion({ content: 'ok' }, 'stop') : legacy });
    model = await up.model();
  });
  after(() => up.close());
  beforeEach(() => up.reset());

  const chat = (key: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    call('POST', '/v1/chat/completions', { headers: { ...keyHeader(key), ...headers }, json: { model, messages: [{ role: 'user', content: 'hi' }], ...extra } });
  const sent = () => up.received.map((r) => [r.body.max_completion_tokens, r.body.max_tokens]);

  it("a key's budget: chat without a cap goes with max_completion_tokens 4096, legacy completions with max_tokens 4096; a cap the request names goes as it is", async () => {
    const o = await buildOrg(env().redis);
    await updateKeyControls(env().redis, o.keyId, { budgetMicros: 1_000_000, budgetPeriod: 'day' });
    expect((await chat(o.key)).status).to.equal(200);
    expect((await chat(o.key, { max_tokens: 50 })).status).to.equal(200);
    expect((await chat(o.key, { max_completion_tokens: 60 })).status).to.equal(200);
    const c = await call('POST', '/v1/completions', { headers: keyHeader(o.key), json: { model, prompt: 'hi' } });
    expect(c.status, c.text).to.equal(200);
    expect(sent()).to.deep.equal([
      [4096, undefined],
      [undefined, 50],
      [60, undefined],
      [undefined, 4096],
    ]);
  });

  it("a project's budget alone does the same; a key without a budget (rpm only), and a passthrough request (not priced), send no cap", async () => {
    const o = await buildOrg(env().redis);
    const p = await Project.findOne({ where: { orgId: o.org.id } });
    await p!.update({ budgetMicros: 1_000_000, budgetPeriod: 'month' });
    await bumpEpoch(env().redis);
    const projectKey = await createApiKey(env().redis, { orgId: o.org.id, projectId: p!.id });
    expect((await chat(projectKey.key)).status).to.equal(200);

    const free = await buildOrg(env().redis);
    await updateKeyControls(env().redis, free.keyId, { rpm: 100 });
    expect((await chat(free.key)).status).to.equal(200);

    const own = await buildOrg(env().redis);
    await updateKeyControls(env().redis, own.keyId, { budgetMicros: 1_000_000, budgetPeriod: 'day' });
    const r = await chat(own.key, {}, { authorization: 'Bearer sk-callers-own-key' });
    expect(r.status, r.text).to.equal(200);
    expect(sent()).to.deep.equal([
      [4096, undefined],
      [undefined, undefined],
      [undefined, undefined],
    ]);
  });

  it('a request naming both caps is OpenAI\'s 400 invalid_parameter_combination before any hold; one cap is held at it and sent as the only cap an upstream that reads max_tokens (Azure before 2024-09-01) reads', async () => {
    const azure = await ScriptedUpstream.start('azure');
    try {
      const old = await azure.model({ prices: { input_token: 1, output_token: 1 }, settings: { api_version: '2024-06-01' } });
      azure.otherwise = () => ({ kind: 'json', body: completion({ content: 'long' }, 'length', { prompt_tokens: 10, completion_tokens: 5000, total_tokens: 5010 }) });
      const o = await buildOrg(env().redis);
      // room for about 200 tokens: max_completion_tokens 1 fits (the 5,000 of max_tokens would not, were both taken)
      await updateKeyControls(env().redis, o.keyId, { budgetMicros: 200, budgetPeriod: 'day' });
      const both = { model: old, max_completion_tokens: 1, max_tokens: 5000, messages: [{ role: 'user', content: 'hi' }] };
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: both });
      expect([r.status, r.body.error?.code], 'refused before the budget is asked').to.deep.equal([400, 'invalid_parameter_combination']);
      expect(azure.received, 'nothing sent').to.have.length(0);
      const one = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: old, max_completion_tokens: 1, messages: both.messages } });
      expect(one.status, 'one cap named: held at it').to.not.equal(402);
      expect(azure.received.map((x) => [x.body.max_completion_tokens, x.body.max_tokens]), 'sent as the only cap this version reads').to.deep.equal([[undefined, 1]]);
    } finally {
      await azure.close();
    }
  });

  it('legacy completions are held at max_tokens, the one cap a completions upstream reads: a max_completion_tokens there is no cap (held and sent at 4,096)', async () => {
    const o = await buildOrg(env().redis);
    await updateKeyControls(env().redis, o.keyId, { budgetMicros: 1_000_000, budgetPeriod: 'day' });
    const c = await call('POST', '/v1/completions', { headers: keyHeader(o.key), json: { model, prompt: 'hi', max_completion_tokens: 1 } });
    expect(c.status, c.text).to.equal(200);
    expect(sent(), 'the cap it was held at goes as max_tokens').to.deep.equal([[1, 4096]]);
    const small = await buildOrg(env().redis);
    await updateKeyControls(env().redis, small.keyId, { budgetMicros: 200, budgetPeriod: 'day' });
    const refused = await call('POST', '/v1/completions', { headers: keyHeader(small.key), json: { model, prompt: 'hi', max_completion_tokens: 1 } });
    expect([refused.status, refused.body.error?.code], 'held at 4,096 output tokens').to.deep.equal([402, 'budget_exceeded']);
  });
});
