import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { expectOpenAI } from '../../helpers/conformance';
import { outcome } from '../../helpers/responses-background';
import { useGeminiModels } from '../../helpers/gemini-model';
import { ScriptedUpstream, byStream } from '../../helpers/scripted-upstream';

const msgs = [{ role: 'user' as const, content: 'hello' }];

/**
 * Chat's `service_tier` (OpenAI's API document: "When the `service_tier` parameter is set, the
 * response body will include the `service_tier` value based on the processing mode actually used"):
 * a value outside OpenAI's tiers is its 400 naming the field, on every upstream kind, before any
 * upstream (a translating adapter dropped it and answered); a tier asked is answered with the tier
 * served — the upstream's own when it names one, else `default` — in the JSON answer and on every
 * streamed chunk. Translated upstreams (Anthropic, Gemini, Bedrock) answered without it.
 */
describe('chat: service_tier refused outside OpenAI tiers, and echoed as the tier served', function () {
  this.timeout(30_000);
  const s = openaiOrg();
  let up: ScriptedUpstream;
  let tiered: string;
  useGeminiModels({ bedrock: true });
  before(async () => {
    up = await ScriptedUpstream.start('openai');
    const base = { id: 'chatcmpl-up', created: 1, model: 'up-model' };
    const chunk = (delta: Record<string, unknown>, finish: string | null) => ({ ...base, object: 'chat.completion.chunk', service_tier: 'flex', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
    up.otherwise = byStream(
      { ...base, object: 'chat.completion', service_tier: 'flex', choices: [{ index: 0, message: { role: 'assistant', content: 'hi', refusal: null }, logprobs: null, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } },
      [chunk({ role: 'assistant', content: 'hi' }, null), chunk({}, 'stop'), { ...base, object: 'chat.completion.chunk', service_tier: 'flex', choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }],
    );
    tiered = await up.model();
  });
  after(async () => {
    await up.close();
  });
  const translated = ['sim-claude', 'test-gemini', 'sim-bedrock-claude'];
  const post = (json: Record<string, unknown>) => call('POST', '/v1/chat/completions', { headers: keyHeader(s.o.key), json });

  it("a tier outside auto, default, flex, scale, priority, fast is 400 naming service_tier in OpenAI's codes (invalid_value; invalid_type for a number), JSON and streamed, every upstream kind; nothing sent", async () => {
    for (const model of ['sim-chat', ...translated]) {
      for (const service_tier of ['turbo', 5, '']) {
        for (const stream of [false, true]) {
          const r = await post({ model, messages: msgs, stream, service_tier });
          expect(r.status, `${model} ${service_tier} ${r.text}`).to.equal(400);
          expect(r.body.error).to.include({ code: service_tier === 5 ? 'invalid_type' : 'invalid_value', type: 'invalid_request_error', param: 'service_tier' });
          expectOpenAI('ErrorResponse', r.body);
        }
      }
    }
    const err = await outcome(s.c.chat.completions.create({ model: 'sim-claude', messages: msgs, service_tier: 'turbo' as 'flex' }));
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err as InstanceType<typeof OpenAI.BadRequestError>).to.deep.include({ status: 400, param: 'service_tier' });
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
  });

  it('a tier asked of a translated upstream (or one that names none) is answered service_tier "default", JSON and on every streamed chunk, usage chunk included; not sent upstream', async () => {
    for (const model of ['sim-chat', ...translated]) {
      const r = await s.c.chat.completions.create({ model, messages: msgs, service_tier: 'flex' });
      expect(r.service_tier, model).to.equal('default');
      expectOpenAI('CreateChatCompletionResponse', r);
      const st = await postSse('/v1/chat/completions', keyHeader(s.o.key), { model, messages: msgs, stream: true, stream_options: { include_usage: true }, service_tier: 'priority' });
      expect(st.status, st.text).to.equal(200);
      const chunks = st.events.slice(0, -1).map((e) => e.data);
      expect(chunks.length, model).to.be.greaterThan(2);
      expect(chunks.every((c) => c.service_tier === 'default'), `${model} every chunk`).to.equal(true);
      expect(chunks.at(-1).usage, `${model} usage chunk`).to.be.an('object');
      for (const c of chunks) expectOpenAI('CreateChatCompletionStreamResponse', c);
      expect(st.events.at(-1)!.data).to.equal('[DONE]');
    }
    for (const e of env().sim.log.entries.filter((x) => x.body && typeof x.body === 'object' && 'messages' in (x.body as object))) {
      if ((e.body as { model?: string }).model === 'sim-claude-1') expect(e.body).not.to.have.property('service_tier');
    }
  });

  it("an upstream's own tier is kept (JSON and streamed); without service_tier a translated answer names none, as before", async () => {
    const r = await s.c.chat.completions.create({ model: tiered, messages: msgs, service_tier: 'auto' });
    expect(r.service_tier).to.equal('flex');
    const st = await postSse('/v1/chat/completions', keyHeader(s.o.key), { model: tiered, messages: msgs, stream: true, service_tier: 'auto' });
    expect(st.events.slice(0, -1).every((e) => e.data.service_tier === 'flex'), st.text).to.equal(true);
    const plain = await post({ model: 'sim-claude', messages: msgs });
    expect(plain.status).to.equal(200);
    expect(plain.body).not.to.have.property('service_tier');
    const nil = await post({ model: 'sim-claude', messages: msgs, service_tier: null });
    expect(nil.status, nil.text).to.equal(200);
    expect(nil.body).not.to.have.property('service_tier');
  });
});
