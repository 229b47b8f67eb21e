import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { usageSettled } from '../../helpers/usage';
import { startAdmin, buildPlatformKey, bearer } from '../../helpers/admin';
import { Model, Provider, UsageEvent } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { importCatalog } from '../../../shared/catalog/catalog-ops';

const V = { 'anthropic-version': '2023-06-01' };
const ask = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'hello preset' }], ...extra });

/** OpenAI-compatible presets (kind openai, `preset`): the service's differences, applied as data. */
describe('OpenAI-compatible presets', () => {
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    const base = `${env().simUrl}/v1`;
    await importCatalog(env().redis, {
      providers: [
        { name: 'p-openrouter', kind: 'openai', preset: 'openrouter', base_url: base, api_key: 'or-key' },
        { name: 'p-groq', kind: 'openai', preset: 'groq', base_url: base, api_key: 'gq-key' },
        { name: 'p-deepseek', kind: 'openai', preset: 'deepseek', base_url: base, api_key: 'ds-key' },
      ],
      models: [
        { id: 'or-chat', provider: 'p-openrouter', upstream: 'or-upstream', capabilities: { chat: true } },
        { id: 'gq-chat', provider: 'p-groq', upstream: 'gq-upstream', capabilities: { chat: true } },
        { id: 'ds-chat', provider: 'p-deepseek', upstream: 'ds-upstream', capabilities: { chat: true } },
      ],
    });
  });

  after(async () => {
    await Model.update({ enabled: false }, { where: { publicId: ['or-chat', 'gq-chat', 'ds-chat'] } });
    await bumpEpoch(env().redis);
  });

  it('fills in the base URL a preset knows when the catalog entry gives none, and refuses a preset it does not know', async () => {
    await importCatalog(env().redis, { providers: [{ name: 'p-groq-default', kind: 'openai', preset: 'groq', api_key: 'x' }], models: [] });
    expect((await Provider.findOne({ where: { name: 'p-groq-default' } }))!.baseUrl).to.equal('https://api.groq.com/openai/v1');
    for (const bad of [
      { name: 'p-bad', kind: 'openai', preset: 'nonesuch' },
      { name: 'p-bad', kind: 'openai', preset: 'vllm' }, // self-hosted: no URL to fill in
      { name: 'p-bad', kind: 'anthropic', preset: 'groq', base_url: 'https://x.example' },
      { name: 'p-bad', kind: 'azure', base_url: 'https://x.example' }, // no api_version
    ]) {
      let failed = false;
      await importCatalog(env().redis, { providers: [bad], models: [] }).catch(() => (failed = true));
      expect(failed, JSON.stringify(bad)).to.equal(true);
    }
    expect(await Provider.findOne({ where: { name: 'p-bad' } })).to.equal(null);
  });

  it('the management API derives base_url from the preset and refuses what a kind needs but lacks', async () => {
    const admin = await startAdmin();
    try {
      const { key } = await buildPlatformKey();
      const post = (json: unknown) => call('POST', '/admin/v1/providers', { base: admin.url, headers: bearer(key), json });
      const ok = await post({ name: `mistral-${Date.now()}`, kind: 'openai', settings: { preset: 'mistral' } });
      expect(ok.status, ok.text).to.equal(201);
      expect(ok.body).to.deep.include({ base_url: 'https://api.mistral.ai/v1', settings: { preset: 'mistral' } });
      const noUrl = await post({ name: `vllm-${Date.now()}`, kind: 'openai', settings: { preset: 'vllm' } });
      expect(noUrl.status, noUrl.text).to.equal(400);
      expect(noUrl.body.error.code).to.equal('invalid_request');
      expect(noUrl.body.error.message).to.include('`base_url`');
      const noVersion = await post({ name: `az-${Date.now()}`, kind: 'azure', base_url: 'https://r.openai.azure.com' });
      expect(noVersion.status, noVersion.text).to.equal(400);
      expect(noVersion.body.error.code).to.equal('invalid_request');
      expect(noVersion.body.error.message).to.include('`settings.api_version`');
      const wrongKind = await post({ name: `an-${Date.now()}`, kind: 'anthropic', base_url: 'https://x.example', settings: { preset: 'groq' } });
      expect(wrongKind.status, wrongKind.text).to.equal(400);
      expect(wrongKind.body.error.message).to.include('`settings.preset`');
    } finally {
      await admin.close();
    }
  });

  it('openrouter: max_completion_tokens sent as max_tokens, `reasoning` answered as reasoning_content (JSON)', async () => {
    env().sim.knobs.set('or-upstream', { reasoning: { field: 'reasoning', text: 'thinking it over' } });
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: ask('or-chat', { max_completion_tokens: 30 }) });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.choices[0].message.reasoning_content).to.equal('thinking it over');
    expect(r.body.choices[0].message).to.not.have.property('reasoning');
    const sent = env().sim.log.entries[0].body as Record<string, unknown>;
    expect(sent.max_tokens).to.equal(30);
    expect(sent).to.not.have.property('max_completion_tokens');
  });

  it('openrouter: the responses and messages dialects\' caps (sent as max_completion_tokens) reach it as max_tokens', async () => {
    const r = await call('POST', '/v1/responses', { headers: keyHeader(o.key), json: { model: 'or-chat', input: 'capped', max_output_tokens: 40 } });
    const m = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V }, json: { model: 'or-chat', max_tokens: 41, messages: [{ role: 'user', content: 'capped' }] } });
    expect([r.status, m.status]).to.deep.equal([200, 200]);
    const sent = env().sim.log.entries.map((e) => e.body as Record<string, unknown>);
    expect(sent.map((b) => [b.max_tokens, 'max_completion_tokens' in b])).to.deep.equal([[40, false], [41, false]]);
  });

  it('openrouter: usage from the last content chunk becomes the usage chunk; no stream_options sent; billed once', async () => {
    env().sim.knobs.set('or-upstream', { reasoning: { field: 'reasoning', text: 'pondering' }, usageInLastChunk: true });
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    const s = await postSse('/v1/chat/completions', keyHeader(o.key), ask('or-chat', { stream: true, stream_options: { include_usage: true } }));
    expect(s.status, s.text).to.equal(200);
    const chunks = s.events.slice(0, -1).map((e) => e.data);
    expect(chunks.map((c) => c.choices[0]?.delta?.reasoning_content ?? '').join('')).to.equal('pondering');
    expect(chunks.some((c) => c.choices[0]?.delta && 'reasoning' in c.choices[0].delta)).to.equal(false);
    const finish = chunks.find((c) => c.choices[0]?.finish_reason);
    expect(finish).to.not.have.property('usage');
    expect(chunks.at(-1).choices).to.deep.equal([]);
    expect(chunks.at(-1).usage.completion_tokens).to.be.greaterThan(0);
    expect(env().sim.log.entries[0].body).to.not.have.property('stream_options');
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { orgId: o.org.id }, order: [['createdAt', 'ASC']] });
    expect(events).to.have.length(before + 1);
    expect(events.at(-1)!.outputTokens).to.equal(chunks.at(-1).usage.completion_tokens);
  });

  it('openrouter: the messages dialect gets a thinking block (with thinking on) and usage, streamed; the responses dialect answers', async () => {
    env().sim.knobs.set('or-upstream', { reasoning: { field: 'reasoning', text: 'step by step' }, usageInLastChunk: true });
    const s = await postSse('/v1/messages', { ...keyHeader(o.key), ...V }, { model: 'or-chat', max_tokens: 100, stream: true, thinking: { type: 'adaptive' }, messages: [{ role: 'user', content: 'think please' }] });
    expect(s.status, s.text).to.equal(200);
    const thinking = s.events.filter((e) => e.data.type === 'content_block_delta' && e.data.delta.type === 'thinking_delta').map((e) => e.data.delta.thinking).join('');
    expect(thinking).to.equal('step by step');
    const text = s.events.filter((e) => e.data.type === 'content_block_delta' && e.data.delta.type === 'text_delta').map((e) => e.data.delta.text).join('');
    expect(text).to.include('think please');
    expect(s.events.find((e) => e.data.type === 'message_delta')!.data.usage.output_tokens).to.be.greaterThan(0);
    const m = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V }, json: { model: 'or-chat', max_tokens: 100, thinking: { type: 'adaptive' }, messages: [{ role: 'user', content: 'json please' }] } });
    expect(m.status, m.text).to.equal(200);
    expect(m.body.content[0]).to.deep.include({ type: 'thinking', thinking: 'step by step' });
    // without thinking on, no thinking block: the text is content[0]
    const plain = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V }, json: { model: 'or-chat', max_tokens: 100, messages: [{ role: 'user', content: 'json please' }] } });
    expect(plain.body.content.map((b: { type: string }) => b.type)).to.deep.equal(['text']);
    const r = await call('POST', '/v1/responses', { headers: keyHeader(o.key), json: { model: 'or-chat', input: 'responses please' } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.output.find((i: { type: string }) => i.type === 'message').content[0].text).to.include('responses please');
    const rs = await postSse('/v1/responses', keyHeader(o.key), { model: 'or-chat', input: 'streamed responses', stream: true });
    expect(rs.status, rs.text).to.equal(200);
    expect(rs.events.find((e) => e.data.type === 'response.completed')!.data.response.usage.output_tokens).to.be.greaterThan(0);
  });

  it('groq: fields it answers 400 to are refused naming the field, before any upstream call, unbilled; off values are left out', async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    for (const [field, value] of [['logprobs', true], ['logit_bias', { '42': 5 }], ['n', 2]] as const) {
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: ask('gq-chat', { [field]: value }) });
      expect(r.status, `${field}: ${r.text}`).to.equal(400);
      expect(r.body.error).to.include({ code: 'unsupported_parameter', param: field });
    }
    // top_logprobs alone is OpenAI's own refusal (it needs logprobs: true), on every upstream
    const top = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: ask('gq-chat', { top_logprobs: 2 }) });
    expect(top.status, top.text).to.equal(400);
    expect(top.body.error).to.include({ code: 'invalid_request', param: 'top_logprobs' });
    const named = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'gq-chat', messages: [{ role: 'user', name: 'ann', content: 'hi' }] } });
    expect(named.status, named.text).to.equal(400);
    expect(named.body.error).to.include({ code: 'unsupported_parameter', param: 'messages[].name' });
    expect(env().sim.log.entries).to.have.length(0);
    const ok = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: ask('gq-chat', { logprobs: false, max_tokens: 20 }) });
    expect(ok.status, ok.text).to.equal(200);
    const sent = env().sim.log.entries[0].body as Record<string, unknown>;
    expect(sent).to.not.have.property('logprobs');
    expect(sent.max_tokens, 'groq reads both caps: left as sent').to.equal(20);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before + 1);
  });

  it("deepseek: its cache hits (prompt_cache_hit_tokens) are reported as cached tokens in every dialect", async () => {
    env().sim.knobs.set('ds-upstream', { usageExtra: { prompt_cache_hit_tokens: 4 } });
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: ask('ds-chat') });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.usage.prompt_tokens_details).to.deep.equal({ cached_tokens: 4 });
    const m = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V }, json: { model: 'ds-chat', max_tokens: 50, messages: [{ role: 'user', content: 'cached?' }] } });
    expect(m.status, m.text).to.equal(200);
    expect(m.body.usage.cache_read_input_tokens).to.equal(4);
    const s = await postSse('/v1/responses', keyHeader(o.key), { model: 'ds-chat', input: 'cached stream', stream: true });
    expect(s.status, s.text).to.equal(200);
    expect(s.events.find((e) => e.data.type === 'response.completed')!.data.response.usage.input_tokens_details.cached_tokens).to.equal(4);
  });

  it('deepseek: reasoning_content passes both ways; streams ask for usage with stream_options', async () => {
    env().sim.knobs.set('ds-upstream', { reasoning: { field: 'reasoning_content', text: 'deep thought' } });
    const s = await postSse('/v1/chat/completions', keyHeader(o.key), ask('ds-chat', { stream: true, max_completion_tokens: 50 }));
    expect(s.status, s.text).to.equal(200);
    const chunks = s.events.slice(0, -1).map((e) => e.data);
    expect(chunks.map((c) => c.choices[0]?.delta?.reasoning_content ?? '').join('')).to.equal('deep thought');
    expect(chunks.some((c) => c.usage), 'usage not asked for: not shown').to.equal(false);
    const sent = env().sim.log.entries[0].body as Record<string, unknown>;
    expect(sent.stream_options).to.deep.equal({ include_usage: true });
    expect(sent.max_tokens).to.equal(50);
    expect(sent).to.not.have.property('max_completion_tokens');
  });
});
