import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { expectOpenAI } from '../../helpers/conformance';
import { outcome } from '../../helpers/responses-background';
import { billedEvents } from '../../helpers/usage';
import { useGeminiModels } from '../../helpers/gemini-model';

const msgs = [{ role: 'user' as const, content: 'hello' }];
const STREAM_OPTIONS = "The 'stream_options' parameter is only allowed when 'stream' is enabled.";
const TOP_LOGPROBS = "The 'top_logprobs' parameter is only allowed when 'logprobs' is enabled.";
const METADATA = "The 'metadata' parameter is only allowed when 'store' is enabled.";

/**
 * Fields OpenAI takes only beside another: `stream_options` on a streamed request, `top_logprobs`
 * with `logprobs: true`. OpenAI refuses each alone (400 invalid_request_error naming it, in these
 * words); the gateway sent them on to an OpenAI-compatible upstream, dropped `stream_options` on a
 * translated one and refused `top_logprobs` in words of its own per adapter. Now OpenAI's 400 on
 * every upstream kind (the gateway's `invalid_request` where OpenAI's code is null), before any
 * upstream, nothing billed; null, and each with its partner, still answer.
 */
describe('OpenAI refusals: stream_options without stream, top_logprobs without logprobs', function () {
  this.timeout(30_000);
  const s = openaiOrg();
  useGeminiModels();
  const models = ['sim-chat', 'sim-claude', 'test-gemini'];
  const post = (path: string, json: Record<string, unknown>) => call('POST', path, { headers: keyHeader(s.o.key), json });

  function expectRefusal(r: Reply, param: string, message: string, what: string): void {
    expect(r.status, `${what} ${r.text}`).to.equal(400);
    expect(r.body.error, what).to.deep.equal({ code: 'invalid_request', message, type: 'invalid_request_error', param });
    expectOpenAI('ErrorResponse', r.body);
  }

  const billed = () => billedEvents(s.o.org.id);

  it("stream_options without stream (absent or false) is OpenAI's 400 naming stream_options, on chat and legacy completions, every upstream kind; nothing sent or billed", async () => {
    const before = await billed();
    for (const model of models) {
      for (const stream of [undefined, false]) {
        const what = `${model} stream ${stream}`;
        expectRefusal(await post('/v1/chat/completions', { model, messages: msgs, stream, stream_options: { include_usage: true } }), 'stream_options', STREAM_OPTIONS, `chat ${what}`);
        expectRefusal(await post('/v1/completions', { model, prompt: 'x', stream, stream_options: { include_usage: false } }), 'stream_options', STREAM_OPTIONS, `completions ${what}`);
      }
    }
    // a mistyped one keeps its own message
    const mistyped = await post('/v1/chat/completions', { model: 'sim-chat', messages: msgs, stream_options: 'usage' });
    expect(mistyped.body.error).to.include({ param: 'stream_options' }).and.not.include({ message: STREAM_OPTIONS });
    const err = await outcome(s.c.chat.completions.create({ model: 'sim-chat', messages: msgs, stream_options: { include_usage: true } }));
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err as InstanceType<typeof OpenAI.BadRequestError>).to.deep.include({ status: 400, type: 'invalid_request_error', code: 'invalid_request', param: 'stream_options' });
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billed(), 'nothing billed').to.equal(before);
  });

  it("top_logprobs without logprobs: true (absent, false or null; 0 too) is OpenAI's 400 naming top_logprobs, on every upstream kind, JSON and streamed; nothing sent or billed", async () => {
    const before = await billed();
    for (const model of models) {
      for (const extra of [{ top_logprobs: 2 }, { top_logprobs: 0, logprobs: false }, { top_logprobs: 5, logprobs: null }]) {
        for (const stream of [false, true]) {
          const what = `${model} ${JSON.stringify(extra)} stream ${stream}`;
          expectRefusal(await post('/v1/chat/completions', { model, messages: msgs, stream, ...extra }), 'top_logprobs', TOP_LOGPROBS, what);
        }
      }
    }
    const err = await outcome(s.c.chat.completions.create({ model: 'sim-claude', messages: msgs, top_logprobs: 3 }));
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err as InstanceType<typeof OpenAI.BadRequestError>).to.deep.include({ status: 400, code: 'invalid_request', param: 'top_logprobs', message: `400 ${TOP_LOGPROBS}` });
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billed(), 'nothing billed').to.equal(before);
  });

  it('each with its partner, or null, still answers: stream_options on a stream (its usage chunk), top_logprobs with logprobs (sent upstream)', async () => {
    for (const model of models) {
      const nil = await post('/v1/chat/completions', { model, messages: msgs, stream_options: null, top_logprobs: null });
      expect(nil.status, `${model} ${nil.text}`).to.equal(200);
      let usage = 0;
      for await (const c of await s.c.chat.completions.create({ model, messages: msgs, stream: true, stream_options: { include_usage: true } })) if (c.usage) usage++;
      expect(usage, model).to.equal(1);
    }
    const r = await s.c.chat.completions.create({ model: 'sim-chat', messages: msgs, logprobs: true, top_logprobs: 2 });
    expect(r.choices[0].logprobs?.content).to.be.an('array');
    expect(env().sim.log.entries.at(-1)!.body).to.include({ logprobs: true, top_logprobs: 2 });
    const legacy = await post('/v1/completions', { model: 'sim-chat', prompt: 'x', stream: true, stream_options: { include_usage: true } });
    expect(legacy.status, legacy.text).to.equal(200);
  });

  /**
   * OpenAI refuses a chat `metadata` unless `store: true` (its answer as quoted in tmc/langchaingo
   * issue 1484, gpt-5-nano, 2026-03, and looplj/axonhub issue 1380, 2026-04); the gateway forwarded
   * it and answered.
   */
  it("metadata without store: true (absent, false or null) is OpenAI's 400 naming metadata on every upstream kind, JSON and streamed; nothing sent or billed; null, {} and store: true still answer", async () => {
    const before = await billed();
    for (const model of models) {
      for (const extra of [{}, { store: false }, { store: null }]) {
        for (const stream of [false, true]) {
          const what = `${model} ${JSON.stringify(extra)} stream ${stream}`;
          expectRefusal(await post('/v1/chat/completions', { model, messages: msgs, stream, metadata: { run: 'a' }, ...extra }), 'metadata', METADATA, what);
        }
      }
    }
    const err = await outcome(s.c.chat.completions.create({ model: 'sim-chat', messages: msgs, metadata: { run: 'a' } }));
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err as InstanceType<typeof OpenAI.BadRequestError>).to.deep.include({ status: 400, code: 'invalid_request', param: 'metadata', message: `400 ${METADATA}` });
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billed(), 'nothing billed').to.equal(before);
    for (const extra of [{ metadata: null }, { metadata: {} }, { metadata: { run: 'a' }, store: true }]) {
      const r = await post('/v1/chat/completions', { model: 'sim-chat', messages: msgs, ...extra });
      expect(r.status, `${JSON.stringify(extra)} ${r.text}`).to.equal(200);
    }
  });
});
