import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { call, keyHeader } from '../../helpers/http';
import { openaiOrg } from '../../helpers/openai-org';
import { postSse } from '../../helpers/sse-events';
import { expectOpenAI, withoutNullUser } from '../../helpers/conformance';

/**
 * The Response's `usage.input_tokens_details.cache_write_tokens` (required by OpenAI's document: "The
 * number of input tokens that were written to the cache") is the upstream's own count: an
 * Anthropic-native upstream's `cache_creation_input_tokens`, an OpenAI-compatible one's
 * `prompt_tokens_details.cache_write_tokens`; chat completions answer it as that field of
 * `prompt_tokens_details` (OpenAI's CompletionUsage), the messages dialect as `cache_creation_input_tokens`.
 * It was always 0.
 */
describe('responses dialect: cache writes in usage', () => {
  const s = openaiOrg();
  const post = (path: string, json: unknown) => call('POST', path, { headers: keyHeader(s.o.key), json });

  const cases = [
    ['sim-claude', { cache_read_input_tokens: 7, cache_creation_input_tokens: 5 }, { cached_tokens: 7, cache_write_tokens: 5 }],
    ['sim-chat', { prompt_tokens_details: { cached_tokens: 3, cache_write_tokens: 4 } }, { cached_tokens: 3, cache_write_tokens: 4 }],
  ] as const;

  for (const [model, reported, details] of cases) {
    it(`${model}: the upstream's cache writes are input_tokens_details.cache_write_tokens, JSON, streamed and retrieved`, async () => {
      env().sim.knobs.set('*', { usageExtra: reported });
      const r = await post('/v1/responses', { model, input: 'cache me' });
      expect(r.status, r.text).to.equal(200);
      expectOpenAI('Response', withoutNullUser(r.body));
      expect(r.body.usage.input_tokens_details).to.deep.equal(details);
      // Anthropic counts cached input apart from input_tokens; the Response's input_tokens include it
      if (model === 'sim-claude') expect(r.body.usage.input_tokens).to.be.greaterThan(details.cached_tokens + details.cache_write_tokens);
      const got = await call('GET', `/v1/responses/${r.body.id}`, { headers: keyHeader(s.o.key) });
      expect(got.body.usage.input_tokens_details).to.deep.equal(details);

      const sse = await postSse('/v1/responses', keyHeader(s.o.key), { model, input: 'cache me streamed', stream: true });
      const done = sse.events.at(-1)!.data;
      expect(done.type).to.equal('response.completed');
      expect(done.response.usage.input_tokens_details).to.deep.equal(details);
    });
  }

  it("sim-claude: chat completions' usage carries them as prompt_tokens_details.cache_write_tokens", async () => {
    env().sim.knobs.set('*', { usageExtra: { cache_read_input_tokens: 7, cache_creation_input_tokens: 5 } });
    const r = await post('/v1/chat/completions', { model: 'sim-claude', messages: [{ role: 'user', content: 'cache me' }] });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.usage.prompt_tokens_details).to.deep.equal({ cached_tokens: 7, cache_write_tokens: 5 });
  });

  it("sim-chat: the messages dialect answers an OpenAI-compatible upstream's cache writes as cache_creation_input_tokens, apart from input_tokens", async () => {
    env().sim.knobs.set('*', { usageExtra: { prompt_tokens: 20, prompt_tokens_details: { cached_tokens: 3, cache_write_tokens: 4 } } });
    const headers = Object.assign({ 'anthropic-version': '2023-06-01' }, keyHeader(s.o.key));
    const r = await call('POST', '/v1/messages', { headers, json: { model: 'sim-chat', max_tokens: 64, messages: [{ role: 'user', content: 'cache me' }] } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.usage).to.deep.include({ input_tokens: 13, cache_read_input_tokens: 3, cache_creation_input_tokens: 4, cache_creation: { ephemeral_5m_input_tokens: 4, ephemeral_1h_input_tokens: 0 } });
  });

  it('none reported: 0, and chat completions answer no cache_write_tokens', async () => {
    const r = await post('/v1/responses', { model: 'sim-claude', input: 'no cache' });
    expect(r.body.usage.input_tokens_details).to.deep.equal({ cached_tokens: 0, cache_write_tokens: 0 });
    const c = await post('/v1/chat/completions', { model: 'sim-claude', messages: [{ role: 'user', content: 'no cache' }] });
    expect(c.body.usage.prompt_tokens_details).to.deep.equal({ cached_tokens: 0 });
  });
});
