import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { TRANSLATED_MODELS, translatedCompletionsSuite } from '../../helpers/translated-completions';
import { call, keyHeader } from '../../helpers/http';
import { updateKeyControls } from '../../../shared/tenancy/ops';
import { buildOrg } from '../../helpers/factories';
import { UsageEvent } from '../../../shared/db/models';
import { ledgerSpend } from '../../../shared/limits/ledger-spend';
import { usageSettled } from '../../helpers/usage';

type BadRequest = InstanceType<typeof OpenAI.BadRequestError>;
const refusal = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as BadRequest);

/**
 * Legacy completions' `best_of` and `max_tokens` as OpenAI's CreateCompletionRequest documents them
 * (test/fixtures/vendor/openai/openapi.json): `best_of` "must be greater than `n`" (fewer candidates
 * than completions to return is refused), and `max_tokens` has the minimum 0 (a prompt scored with
 * `echo` and `logprobs`, nothing generated), sent to an OpenAI-compatible upstream and refused on a
 * translated one.
 */
describe('legacy completions: best_of below n is refused; max_tokens 0 scores a prompt on an OpenAI-compatible upstream', () => {
  const s = translatedCompletionsSuite();

  it('refuses best_of smaller than n 400 invalid_request naming best_of, on every upstream kind, JSON and streamed, nothing sent or billed', async () => {
    const before = await s.billed();
    for (const model of ['sim-chat', ...TRANSLATED_MODELS]) {
      for (const stream of [false, true]) {
        const err = await refusal(s.client.completions.create({ model, prompt: 'two of one', n: 2, best_of: 1, max_tokens: 5, stream }));
        expect(err, `${model} stream=${stream}`).to.be.instanceOf(OpenAI.BadRequestError);
        expect(err!.error, model).to.deep.equal({ code: 'invalid_request', message: 'best_of must be greater than or equal to n.', type: 'invalid_request_error', param: 'best_of' });
      }
    }
    const r = await call('POST', '/v1/completions', { headers: keyHeader(s.o.key), json: { model: 'sim-chat', prompt: 'x', n: 5, best_of: 3 } });
    expect(r.status, r.text).to.equal(400);
    expect(r.body.error).to.include({ param: 'best_of' });
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await s.billed()).to.equal(before);
  });

  it('best_of equal to n, or above it, reaches an OpenAI-compatible upstream as sent', async () => {
    for (const [n, bestOf] of [[2, 2], [1, 3]]) {
      const r = await s.client.completions.create({ model: 'sim-chat', prompt: 'enough candidates', n, best_of: bestOf, max_tokens: 5 });
      expect(r.object).to.equal('text_completion');
    }
    expect(env().sim.log.entries.map((e) => e.body as Record<string, unknown>).map((b) => [b.n, b.best_of])).to.deep.equal([[2, 2], [1, 3]]);
  });

  it('max_tokens 0 with echo and logprobs reaches an OpenAI-compatible upstream as 0 (not the held cap): the prompt echoed, nothing generated, billed for the prompt only', async () => {
    const before = await s.billed();
    const r = await s.client.completions.create({ model: 'sim-chat', prompt: 'score this prompt', max_tokens: 0, echo: true, logprobs: 0 });
    expect(r.choices[0].text).to.equal('score this prompt');
    expect(r.usage?.completion_tokens).to.equal(0);
    const sent = env().sim.log.entries[0].body as Record<string, unknown>;
    expect(sent).to.include({ max_tokens: 0, echo: true, logprobs: 0 });
    expect(await s.billed()).to.equal(before + 1);
    const [event] = await UsageEvent.findAll({ where: { orgId: s.o.org.id }, order: [['createdAt', 'DESC']], limit: 1 });
    expect(event.outputTokens).to.equal(0);
    expect(event.inputTokens).to.be.greaterThan(0);
  });

  it("max_tokens 0 from a key with a budget is held and sent as 0, not replaced by the model's output cap", async () => {
    const budgeted = await buildOrg(env().redis);
    await updateKeyControls(env().redis, budgeted.keyId, { budgetMicros: 10_000_000, budgetPeriod: 'day' });
    const c = new OpenAI({ apiKey: budgeted.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    for (const stream of [false, true]) {
      const r = await call('POST', '/v1/completions', { headers: keyHeader(budgeted.key), json: { model: 'sim-chat', prompt: 'score this prompt', max_tokens: 0, echo: true, stream } });
      expect(r.status, r.text).to.equal(200);
    }
    const r = await c.completions.create({ model: 'sim-chat', prompt: 'score this prompt', max_tokens: 0, echo: true });
    expect(r.choices[0].text).to.equal('score this prompt');
    expect(env().sim.log.entries.map((e) => (e.body as Record<string, unknown>).max_tokens)).to.deep.equal([0, 0, 0]);
  });

  it("max_tokens 0 on a budgeted key is held at the model's output cap: a server reading 0 as no limit cannot write past the budget", async () => {
    // the upstream reads the falsy cap as none and writes 2,000 words (about 3,000 µ$ at 1.5 µ$ a token)
    env().sim.knobs.set('sim-chat-1', { zeroCapUnlimited: true, outputWords: 2000 });
    const budgetMicros = 1000;
    const tight = await buildOrg(env().redis);
    await updateKeyControls(env().redis, tight.keyId, { budgetMicros, budgetPeriod: 'day' });
    for (const stream of [false, true]) {
      const r = await call('POST', '/v1/completions', { headers: keyHeader(tight.key), json: { model: 'sim-chat', prompt: 'score this prompt', max_tokens: 0, echo: true, stream } });
      expect(r.status, r.text.slice(0, 300)).to.equal(402);
      expect(r.body.error.code).to.equal('budget_exceeded');
    }
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    await usageSettled();
    expect(await ledgerSpend('key', tight.keyId, null)).to.equal(0);
    // a budget that covers the model's cap: admitted, sent as 0, billed what the server wrote
    const roomy = await buildOrg(env().redis);
    await updateKeyControls(env().redis, roomy.keyId, { budgetMicros: 100_000, budgetPeriod: 'day' });
    const r = await call('POST', '/v1/completions', { headers: keyHeader(roomy.key), json: { model: 'sim-chat', prompt: 'score this prompt', max_tokens: 0, echo: true } });
    expect(r.status, r.text).to.equal(200);
    expect((env().sim.log.entries[0].body as Record<string, unknown>).max_tokens).to.equal(0);
    await usageSettled();
    const spent = await ledgerSpend('key', roomy.keyId, null);
    expect(spent).to.be.greaterThan(budgetMicros).and.at.most(100_000);
  });

  it('refuses max_tokens 0 on a translated upstream 400 unsupported_parameter naming max_tokens, JSON and streamed, nothing sent or billed; below 0 is invalid everywhere', async () => {
    const before = await s.billed();
    for (const model of TRANSLATED_MODELS) {
      for (const stream of [false, true]) {
        const err = await refusal(s.client.completions.create({ model, prompt: 'score this prompt', max_tokens: 0, stream }));
        expect(err, `${model} stream=${stream}`).to.be.instanceOf(OpenAI.BadRequestError);
        expect(err!.error, model).to.include({ code: 'unsupported_parameter', type: 'invalid_request_error', param: 'max_tokens' });
        expect((err!.error as { message: string }).message).to.include('OpenAI-compatible upstream');
      }
      // with echo too: max_tokens is named first, the reason the request cannot be served
      const both = await refusal(s.client.completions.create({ model, prompt: 'score', max_tokens: 0, echo: true }));
      expect(both!.error).to.include({ param: 'max_tokens' });
    }
    for (const model of ['sim-chat', 'sim-claude']) {
      const r = await call('POST', '/v1/completions', { headers: keyHeader(s.o.key), json: { model, prompt: 'x', max_tokens: -1 } });
      expect(r.status, r.text).to.equal(400);
      expect(r.body.error).to.include({ code: 'integer_below_min_value', param: 'max_tokens' });
    }
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await s.billed()).to.equal(before);
  });
});
