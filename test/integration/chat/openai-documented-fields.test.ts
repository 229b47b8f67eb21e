import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { expectOpenAI } from '../../helpers/conformance';
import { outcome } from '../../helpers/responses-background';
import { billedEvents } from '../../helpers/usage';
import { useGeminiModels } from '../../helpers/gemini-model';
import { CLAUDE } from '../providers/bedrock-setup';
import { upsertModel } from '../../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { rndId, simDeployment } from '../../helpers/pool-models';

const msgs = [{ role: 'user' as const, content: 'hello' }];
const FINGERPRINT = /^fp_[0-9a-f]{10}$/;
const BOTH = "Setting 'max_tokens' and 'max_completion_tokens' at the same time is not supported.";
const EFFORTS = "'none', 'minimal', 'low', 'medium', 'high', 'xhigh', and 'max'";

/**
 * The fields of OpenAI's ChatCompletion and ChatCompletionChunk (its API document, openai-node
 * 7.60.0) on answers translated from Anthropic, Gemini and Bedrock: `system_fingerprint` (a string:
 * the serving deployment's, the same on the JSON answer and every chunk) and each message's
 * `annotations` (`[]` when there are none); translated answers had neither. And three request rules
 * of OpenAI's, kept before anything is sent or billed: `reasoning_effort` and `verbosity` among its
 * values (400 invalid_value / invalid_type naming the field), and not both `max_tokens` and
 * `max_completion_tokens` (400 invalid_parameter_combination naming max_tokens); all three went to an
 * OpenAI-compatible upstream as sent.
 */
describe('chat: documented answer fields on translated upstreams, and OpenAI refusals of reasoning_effort, verbosity and both max token fields', function () {
  this.timeout(60_000);
  const s = openaiOrg();
  useGeminiModels({ bedrock: true });
  const translated = ['sim-claude', 'test-gemini', 'sim-bedrock-claude'];
  const models = ['sim-chat', ...translated];
  const post = (json: Record<string, unknown>) => call('POST', '/v1/chat/completions', { headers: keyHeader(s.o.key), json });

  const billed = () => billedEvents(s.o.org.id);

  function expectRefusal(r: Reply, error: Record<string, unknown>, what: string): void {
    expect(r.status, `${what} ${r.text}`).to.equal(400);
    expect(r.body.error, what).to.deep.equal(error);
    expectOpenAI('ErrorResponse', r.body);
  }

  it('a translated answer has a system_fingerprint (fp_ and 10 hex digits, its deployment own, stable) and annotations: [], JSON and on every streamed chunk', async () => {
    const seen = new Map<string, string>();
    for (const model of translated) {
      const r = await s.c.chat.completions.create({ model, messages: msgs });
      expect(r.system_fingerprint, model).to.match(FINGERPRINT);
      expect(r.choices[0].message.annotations, model).to.deep.equal([]);
      expectOpenAI('CreateChatCompletionResponse', r);
      const again = await post({ model, messages: msgs, max_completion_tokens: 20 });
      expect(again.body.system_fingerprint, `${model} stable`).to.equal(r.system_fingerprint);
      // the upstream model's name is not in it
      expect(JSON.stringify(r)).not.to.include(CLAUDE).and.not.to.include('sim-gemini-1').and.not.to.include('sim-claude-1');
      seen.set(model, r.system_fingerprint!);

      const st = await postSse('/v1/chat/completions', keyHeader(s.o.key), { model, messages: msgs, stream: true, stream_options: { include_usage: true } });
      expect(st.status, st.text).to.equal(200);
      const chunks = st.events.slice(0, -1).map((e) => e.data as Record<string, unknown>);
      expect(chunks.length, model).to.be.greaterThan(2);
      expect(chunks.map((c) => c.system_fingerprint), `${model} every chunk, usage chunk included`).to.deep.equal(chunks.map(() => r.system_fingerprint));
      expect(chunks.at(-1)!.usage, `${model} usage chunk`).to.be.an('object');
      for (const c of chunks) expectOpenAI('CreateChatCompletionStreamResponse', c);

      // the official client's accumulated stream has it too
      const runner = s.c.chat.completions.stream({ model, messages: msgs });
      const done = await runner.finalChatCompletion();
      expect(done.system_fingerprint, `${model} SDK stream`).to.equal(r.system_fingerprint);
    }
    expect(new Set(seen.values()).size, 'one per deployment').to.equal(translated.length);
    // an OpenAI-compatible upstream's message gets annotations: [] too (the simulator sends none)
    const compat = await s.c.chat.completions.create({ model: 'sim-chat', messages: msgs });
    expect(compat.choices[0].message.annotations).to.deep.equal([]);
    expectOpenAI('CreateChatCompletionResponse', compat);
  });

  it('a legacy completion translated from those upstreams carries the same system_fingerprint, JSON and on every streamed chunk', async () => {
    for (const model of translated) {
      const chat = await post({ model, messages: msgs });
      const r = await s.c.completions.create({ model, prompt: 'hello', max_tokens: 20 });
      expect(r.system_fingerprint, model).to.equal(chat.body.system_fingerprint).and.to.match(FINGERPRINT);
      expectOpenAI('CreateCompletionResponse', r);
      const st = await postSse('/v1/completions', keyHeader(s.o.key), { model, prompt: 'hello', max_tokens: 20, stream: true, stream_options: { include_usage: true } });
      const chunks = st.events.slice(0, -1).map((e) => e.data as Record<string, unknown>);
      expect(chunks.length, model).to.be.greaterThan(1);
      expect(chunks.map((c) => c.system_fingerprint), `${model} every chunk`).to.deep.equal(chunks.map(() => chat.body.system_fingerprint));
    }
  });

  it("a reasoning_effort or verbosity outside OpenAI's values is its 400 invalid_value (not a string: invalid_type) naming the field, every upstream kind, JSON and streamed; nothing sent or billed", async () => {
    const before = await billed();
    for (const model of models) {
      for (const stream of [false, true]) {
        const what = `${model} stream ${stream}`;
        expectRefusal(
          await post({ model, messages: msgs, stream, reasoning_effort: 'extreme' }),
          { code: 'invalid_value', type: 'invalid_request_error', param: 'reasoning_effort', message: `Invalid value: 'extreme'. Supported values are: ${EFFORTS}.` },
          `${what} effort`,
        );
        expectRefusal(
          await post({ model, messages: msgs, stream, verbosity: 'verbose' }),
          { code: 'invalid_value', type: 'invalid_request_error', param: 'verbosity', message: "Invalid value: 'verbose'. Supported values are: 'low', 'medium', and 'high'." },
          `${what} verbosity`,
        );
      }
      expectRefusal(
        await post({ model, messages: msgs, reasoning_effort: 3 }),
        { code: 'invalid_type', type: 'invalid_request_error', param: 'reasoning_effort', message: "Invalid type for 'reasoning_effort': expected one of 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', or 'max', but got an integer instead." },
        `${model} effort type`,
      );
      expectRefusal(
        await post({ model, messages: msgs, verbosity: ['low'] }),
        { code: 'invalid_type', type: 'invalid_request_error', param: 'verbosity', message: "Invalid type for 'verbosity': expected one of 'low', 'medium', or 'high', but got an array instead." },
        `${model} verbosity type`,
      );
      // case matters, as in OpenAI's enum
      expect((await post({ model, messages: msgs, reasoning_effort: 'High' })).body.error).to.include({ code: 'invalid_value', param: 'reasoning_effort' });
    }
    const err = await outcome(s.c.chat.completions.create({ model: 'sim-chat', messages: msgs, reasoning_effort: 'extreme' as 'high' }));
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err as InstanceType<typeof OpenAI.BadRequestError>).to.deep.include({ status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'reasoning_effort' });
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billed(), 'nothing billed').to.equal(before);
  });

  it('each documented reasoning_effort and verbosity (and null) still goes to an OpenAI-compatible upstream as sent', async () => {
    for (const reasoning_effort of ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']) {
      const r = await post({ model: 'sim-chat', messages: msgs, reasoning_effort });
      expect(r.status, `${reasoning_effort} ${r.text}`).to.equal(200);
      expect(env().sim.log.entries.at(-1)!.body).to.include({ reasoning_effort });
    }
    for (const verbosity of ['low', 'medium', 'high']) {
      const r = await post({ model: 'sim-chat', messages: msgs, verbosity });
      expect(r.status, `${verbosity} ${r.text}`).to.equal(200);
      expect(env().sim.log.entries.at(-1)!.body).to.include({ verbosity });
    }
    const nil = await post({ model: 'sim-chat', messages: msgs, reasoning_effort: null, verbosity: null });
    expect(nil.status, nil.text).to.equal(200);
  });

  it("a level outside OpenAI's values that the model's config lists (an upstream's own, as Groq's 'default') is sent as before, JSON and streamed; an unlisted one is still OpenAI's invalid_value, a listed-out OpenAI level unsupported_parameter", async () => {
    const model = `own-levels-${rndId()}`;
    await upsertModel({ id: model, deployments: [simDeployment('own')], capabilities: { chat: true }, prices: { input_token: 1, output_token: 1 }, config: { reasoning_effort: ['none', 'default'] } });
    await bumpEpoch(env().redis);
    const r = await post({ model, messages: msgs, reasoning_effort: 'default' });
    expect(r.status, r.text).to.equal(200);
    expect(env().sim.log.entries.at(-1)!.body).to.include({ reasoning_effort: 'default' });
    const st = await postSse('/v1/chat/completions', keyHeader(s.o.key), { model, messages: msgs, stream: true, reasoning_effort: 'default' });
    expect(st.status, st.text).to.equal(200);
    expect(env().sim.log.entries.at(-1)!.body).to.include({ reasoning_effort: 'default', stream: true });
    const before = await billed();
    const sent = env().sim.log.entries.length;
    expectRefusal(
      await post({ model, messages: msgs, reasoning_effort: 'extreme' }),
      { code: 'invalid_value', type: 'invalid_request_error', param: 'reasoning_effort', message: `Invalid value: 'extreme'. Supported values are: ${EFFORTS}.` },
      'unlisted, not OpenAI\'s',
    );
    expect((await post({ model, messages: msgs, reasoning_effort: 'low' })).body.error).to.include({ code: 'unsupported_parameter', param: 'reasoning_effort' });
    // a model without a list still takes OpenAI's values alone
    expect((await post({ model: 'sim-chat', messages: msgs, reasoning_effort: 'default' })).body.error).to.include({ code: 'invalid_value', param: 'reasoning_effort' });
    expect(env().sim.log.entries, 'nothing sent').to.have.length(sent);
    expect(await billed(), 'nothing billed').to.equal(before);
  });

  it("max_tokens beside max_completion_tokens is OpenAI's 400 invalid_parameter_combination naming max_tokens, every upstream kind, JSON and streamed; nothing sent or billed; either alone (the other null) answers", async () => {
    const before = await billed();
    for (const model of models) {
      for (const stream of [false, true]) {
        expectRefusal(
          await post({ model, messages: msgs, stream, max_tokens: 50, max_completion_tokens: 60 }),
          { code: 'invalid_parameter_combination', type: 'invalid_request_error', param: 'max_tokens', message: BOTH },
          `${model} stream ${stream}`,
        );
      }
    }
    const err = await outcome(s.c.chat.completions.create({ model: 'sim-claude', messages: msgs, max_tokens: 10, max_completion_tokens: 10 }));
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err as InstanceType<typeof OpenAI.BadRequestError>).to.deep.include({ status: 400, code: 'invalid_parameter_combination', param: 'max_tokens', message: `400 ${BOTH}` });
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billed(), 'nothing billed').to.equal(before);
    for (const model of models) {
      for (const caps of [{ max_tokens: 50, max_completion_tokens: null }, { max_tokens: null, max_completion_tokens: 50 }]) {
        const r = await post({ model, messages: msgs, ...caps });
        expect(r.status, `${model} ${JSON.stringify(caps)} ${r.text}`).to.equal(200);
      }
    }
  });
});
