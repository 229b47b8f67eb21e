import { expect } from 'chai';
import http from 'http';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { usageSettled } from '../../helpers/usage';
import { Model, UsageEvent } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { importCatalog } from '../../../shared/catalog/catalog-ops';
import { DEFAULT_CATALOG } from '../../../shared/catalog/default-catalog';
import OpenAI, { AzureOpenAI, toFile } from 'openai';
import { makeWav, SPEECH_LIKE } from '../../helpers/wav';
import fs from 'fs';
import path from 'path';

const V = { 'anthropic-version': '2023-06-01' };
const KEY = 'azure-sim-key-0123';
const chat = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hello azure' }], ...extra });

/** An upstream that answers every POST with Azure's documented example answer (test/fixtures/vendor/azure/README.md). */
async function recordedUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const example = JSON.parse(fs.readFileSync(path.resolve('test/fixtures/vendor/azure/chat_completions.json'), 'utf8'));
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(example.responses['200'].body)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function usageOf(requestId: string | null) {
  await usageSettled();
  return UsageEvent.findAll({ where: { requestId: requestId ?? '' } });
}

/** Azure OpenAI (kind `azure`) through the real app, workers and the simulator's Azure routes. */
describe('Azure OpenAI upstreams (kind azure)', () => {
  let o: TestOrg;
  let recordedServer: Awaited<ReturnType<typeof recordedUpstream>>;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    recordedServer = await recordedUpstream();
    const sim = env().simUrl;
    const simImage = DEFAULT_CATALOG.find((m) => m.publicId === 'sim-image')!;
    await importCatalog(env().redis, {
      providers: [
        { name: 'azure-sim', kind: 'azure', base_url: sim, api_key: KEY, api_version: '2024-10-21' },
        { name: 'azure-sim-v1', kind: 'azure', base_url: `${sim}/openai/`, api_key: KEY, api_version: 'v1' },
        { name: 'azure-recorded', kind: 'azure', base_url: recordedServer.url, api_key: KEY, api_version: '2024-10-21' },
        { name: 'azure-sim-2024-06', kind: 'azure', base_url: sim, api_key: KEY, api_version: '2024-06-01' },
      ],
      models: [
        { id: 'az-chat', provider: 'azure-sim', upstream: 'gpt-4o-prod', capabilities: { chat: true, vision: true }, prices: { input_token: 1, output_token: 2 } },
        { id: 'az-chat-v1', provider: 'azure-sim-v1', upstream: 'gpt-4o-v1dep', capabilities: { chat: true } },
        { id: 'az-chat-2024-06', provider: 'azure-sim-2024-06', upstream: 'gpt-4o-old', capabilities: { chat: true } },
        { id: 'az-recorded', provider: 'azure-recorded', upstream: 'pirate', capabilities: { chat: true } },
        { id: 'az-image', provider: 'azure-sim', upstream: 'image-dep', capabilities: { image_generation: true }, limits: simImage.limits, prices: simImage.prices },
        { id: 'az-whisper', provider: 'azure-sim', upstream: 'whisper-dep', capabilities: { transcription: true }, config: { audio_config: { max_duration_seconds: 3600, supports_word_timestamps: true } }, prices: { audio_second: 100 } },
        { id: 'az-embed', provider: 'azure-sim', upstream: 'embed-dep', capabilities: { embeddings: true }, context_window: 512, limits: { max_batch_size: 16, max_input_tokens: 512, dimensions: 256 }, prices: { input_token: 0.02 } },
      ],
    });
  });
  after(async () => {
    // Later files pick models from the catalog (e.g. the first image model by id): these leave it as they found it.
    await Model.update({ enabled: false }, { where: { publicId: ['az-chat', 'az-chat-v1', 'az-recorded', 'az-image', 'az-whisper', 'az-embed'] } });
    await bumpEpoch(env().redis);
    await recordedServer.close();
  });

  it('calls the deployment URL with api-version and the api-key header, and answers JSON with the public id', async () => {
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: chat('az-chat', { max_tokens: 40 }) });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.model).to.equal('az-chat');
    expect(r.body.choices[0].message.content).to.include('hello azure');
    expect(r.body.prompt_filter_results, "Azure's own annotation passes through").to.have.length(1);
    const sent = env().sim.log.entries[0];
    expect(sent.path).to.equal('/openai/deployments/gpt-4o-prod/chat/completions');
    expect(sent.query).to.deep.equal({ 'api-version': '2024-10-21' });
    expect(sent.apiKeyHeader).to.equal(KEY);
    expect(sent.authorization, 'no bearer token goes to Azure').to.equal(undefined);
    expect(sent.body).to.deep.include({ max_tokens: 40 });
    const [ev] = await usageOf(r.headers.get('x-service-request-id'));
    expect([ev.inputTokens, ev.outputTokens]).to.deep.equal([r.body.usage.prompt_tokens, r.body.usage.completion_tokens]);
  });

  it('sends what the official AzureOpenAI client sends: same path, api-version and api-key', async () => {
    const client = new AzureOpenAI({ endpoint: env().simUrl, apiKey: KEY, apiVersion: '2024-10-21', maxRetries: 0 });
    await client.chat.completions.create({ model: 'gpt-4o-prod', messages: [{ role: 'user', content: 'sdk' }] });
    await client.embeddings.create({ model: 'embed-dep', input: 'sdk' });
    await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: chat('az-chat') });
    await call('POST', '/v1/embeddings', { headers: keyHeader(o.key), json: { model: 'az-embed', input: 'gw' } });
    const [sdkChat, sdkEmbed, gwChat, gwEmbed] = env().sim.log.entries;
    for (const [sdk, gw] of [[sdkChat, gwChat], [sdkEmbed, gwEmbed]]) {
      expect(gw.path).to.equal(sdk.path);
      expect(gw.query).to.deep.equal(sdk.query);
      expect(gw.apiKeyHeader).to.equal(sdk.apiKeyHeader);
    }
  });

  it('streams chat chunks through Azure\'s filter-only first chunk, with the usage chunk when asked, billed once', async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    const s = await postSse('/v1/chat/completions', keyHeader(o.key), chat('az-chat', { stream: true, stream_options: { include_usage: true } }));
    expect(s.status, s.text).to.equal(200);
    expect(s.events.at(-1)!.data).to.equal('[DONE]');
    const chunks = s.events.slice(0, -1).map((e) => e.data);
    expect(chunks[0], "Azure's filter-only chunk, passed on").to.deep.include({ choices: [] });
    expect(chunks[0].prompt_filter_results).to.have.length(1);
    expect(chunks.every((c) => c.model === 'az-chat')).to.equal(true);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).to.include('hello azure');
    expect(chunks.at(-1).choices).to.deep.equal([]);
    expect(chunks.at(-1).usage.completion_tokens).to.be.greaterThan(0);
    expect((env().sim.log.entries[0].body as { stream_options: unknown }).stream_options).to.deep.equal({ include_usage: true });
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { orgId: o.org.id }, order: [['createdAt', 'ASC']] });
    expect(events).to.have.length(before + 1);
    expect(events.at(-1)!.outputTokens).to.equal(chunks.at(-1).usage.completion_tokens);
  });

  it('api-version 2024-06-01 (which refuses stream_options and max_completion_tokens): streams without stream_options, billed by the estimate; the messages dialect\'s cap goes as max_tokens', async () => {
    const s = await postSse('/v1/chat/completions', keyHeader(o.key), chat('az-chat-2024-06', { stream: true, stream_options: { include_usage: true } }));
    expect(s.status, s.text).to.equal(200);
    expect(env().sim.log.entries[0].body).to.not.have.property('stream_options');
    const chunks = s.events.slice(0, -1).map((e) => e.data);
    expect(chunks.at(-1).usage.completion_tokens, 'the estimate').to.be.greaterThan(0);
    const m = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V }, json: { model: 'az-chat-2024-06', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] } });
    expect(m.status, m.text).to.equal(200);
    expect(env().sim.log.entries[1].body).to.deep.include({ max_tokens: 50 }).and.not.have.property('max_completion_tokens');
  });

  it('serves the messages dialect, JSON and streamed, with a tool call whose id survives the round trip', async () => {
    const h = { ...keyHeader(o.key), ...V };
    const tools = [{ name: 'lookup', description: 'Look it up', input_schema: { type: 'object', properties: { query: { type: 'string' } } } }];
    const first = await call('POST', '/v1/messages', { headers: h, json: { model: 'az-chat', max_tokens: 100, tools, messages: [{ role: 'user', content: 'use a tool for bees' }] } });
    expect(first.status, first.text).to.equal(200);
    expect(first.body).to.include({ type: 'message', model: 'az-chat', stop_reason: 'tool_use' });
    const use = first.body.content.find((b: { type: string }) => b.type === 'tool_use');
    expect(use).to.deep.include({ id: 'call_sim1', name: 'lookup', input: { query: 'use a tool for bees' } });
    expect(env().sim.log.entries[0].path).to.equal('/openai/deployments/gpt-4o-prod/chat/completions');

    const s = await postSse('/v1/messages', h, {
      model: 'az-chat',
      max_tokens: 100,
      stream: true,
      tools,
      messages: [
        { role: 'user', content: 'use a tool for bees' },
        { role: 'assistant', content: first.body.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'bees: 12' }] },
      ],
    });
    expect(s.status, s.text).to.equal(200);
    const types = s.events.map((e) => e.data.type);
    expect(types[0]).to.equal('message_start');
    expect(types.at(-1)).to.equal('message_stop');
    const text = s.events.filter((e) => e.data.type === 'content_block_delta').map((e) => e.data.delta.text).join('');
    expect(text).to.include('bees: 12');
    const delta = s.events.find((e) => e.data.type === 'message_delta')!.data;
    expect(delta.delta.stop_reason).to.equal('end_turn');
    expect(delta.usage.output_tokens).to.be.greaterThan(0);
    const sentMessages = (env().sim.log.entries[1].body as { messages: Array<Record<string, unknown>> }).messages;
    expect(sentMessages.find((m) => m.role === 'tool')).to.deep.include({ tool_call_id: 'call_sim1' });
    expect((sentMessages.find((m) => m.role === 'assistant') as { tool_calls: Array<{ id: string }> }).tool_calls[0].id).to.equal('call_sim1');
  });

  it('serves the responses dialect, JSON and streamed', async () => {
    const h = keyHeader(o.key);
    const r = await call('POST', '/v1/responses', { headers: h, json: { model: 'az-chat', input: 'hello responses on azure', instructions: 'Be brief.' } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ object: 'response', status: 'completed', model: 'az-chat' });
    expect(r.body.output_text ?? r.body.output[0].content[0].text).to.include('hello responses on azure');
    const s = await postSse('/v1/responses', h, { model: 'az-chat', input: 'stream responses on azure', stream: true });
    expect(s.status, s.text).to.equal(200);
    const done = s.events.find((e) => e.data.type === 'response.completed')!.data;
    expect(done.response.usage.output_tokens).to.be.greaterThan(0);
    const text = s.events.filter((e) => e.data.type === 'response.output_text.delta').map((e) => e.data.delta).join('');
    expect(text).to.include('stream responses on azure');
    for (const e of env().sim.log.entries) expect(e.path).to.equal('/openai/deployments/gpt-4o-prod/chat/completions');
  });

  it('with api_version v1 calls /openai/v1/ with the deployment as the body\'s model and no api-version', async () => {
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: chat('az-chat-v1') });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.model).to.equal('az-chat-v1');
    const sent = env().sim.log.entries[0];
    expect(sent.path, 'a base_url ending in /openai/ is the same resource').to.equal('/openai/v1/chat/completions');
    expect(sent.query).to.deep.equal({});
    expect(sent.model).to.equal('gpt-4o-v1dep');
    expect(sent.apiKeyHeader).to.equal(KEY);
  });

  it('answers legacy completions from the deployment\'s /completions, options the chat translation lacks included', async () => {
    const r = await call('POST', '/v1/completions', { headers: keyHeader(o.key), json: { model: 'az-chat', prompt: 'legacy azure', max_tokens: 20, echo: true } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ object: 'text_completion', model: 'az-chat' });
    const sent = env().sim.log.entries[0];
    expect(sent.path).to.equal('/openai/deployments/gpt-4o-prod/completions');
    expect(sent.body).to.deep.include({ prompt: 'legacy azure', echo: true });
  });

  it('embeds through the deployment\'s /embeddings, billed by the upstream\'s count', async () => {
    const r = await call('POST', '/v1/embeddings', { headers: keyHeader(o.key), json: { model: 'az-embed', input: ['one', 'two'] } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.model).to.equal('az-embed');
    expect(r.body.data).to.have.length(2);
    expect(r.body.data[0].embedding).to.be.an('array').with.length.greaterThan(0);
    const sent = env().sim.log.entries[0];
    expect(sent.path).to.equal('/openai/deployments/embed-dep/embeddings');
    expect(sent.query).to.deep.equal({ 'api-version': '2024-10-21' });
    const [ev] = await usageOf(r.headers.get('x-service-request-id'));
    expect(ev.inputTokens).to.equal(r.body.usage.prompt_tokens);
  });

  it('generates images and transcribes audio through the deployment URLs', async () => {
    const client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const img = await client.images.generate({ model: 'az-image', prompt: 'a lighthouse', size: '256x256', response_format: 'b64_json', quality: 'low' });
    expect(Buffer.from(img.data![0].b64_json!, 'base64').subarray(1, 4).toString()).to.equal('PNG');
    // the deployment's answer fields beyond the bytes come through as for OpenAI (docs/images.md)
    expect([img.quality, img.background, img.usage?.output_tokens]).to.deep.equal(['low', 'opaque', 256]);
    const t = await client.audio.transcriptions.create({ file: await toFile(makeWav(SPEECH_LIKE), 'a.wav', { type: 'audio/wav' }), model: 'az-whisper' });
    expect(t.text.length).to.be.greaterThan(0);
    const [gen, audio] = env().sim.log.entries;
    expect([gen.path, gen.query, gen.apiKeyHeader]).to.deep.equal(['/openai/deployments/image-dep/images/generations', { 'api-version': '2024-10-21' }, KEY]);
    expect([audio.path, audio.query, audio.apiKeyHeader]).to.deep.equal(['/openai/deployments/whisper-dep/audio/transcriptions', { 'api-version': '2024-10-21' }, KEY]);
  });

  it("parses Azure's documented answer (azure-rest-api-specs example) in the chat and messages dialects, billing its usage", async () => {
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: chat('az-recorded') });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.choices[0].message.content).to.match(/^Ahoy matey!/);
    expect(r.body.usage).to.deep.equal({ completion_tokens: 557, prompt_tokens: 33, total_tokens: 590 });
    const [ev] = await usageOf(r.headers.get('x-service-request-id'));
    expect([ev.inputTokens, ev.outputTokens]).to.deep.equal([33, 557]);
    const m = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V }, json: { model: 'az-recorded', max_tokens: 600, messages: [{ role: 'user', content: 'parrot?' }] } });
    expect(m.status, m.text).to.equal(200);
    expect(m.body).to.deep.include({ stop_reason: 'end_turn', usage: m.body.usage });
    expect(m.body.usage).to.include({ input_tokens: 33, output_tokens: 557 });
    expect(m.body.content[0].text).to.match(/^Ahoy matey!/);
  });

  it('maps upstream failures to the spec codes and bills nothing: 429, a refused platform key', async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    env().sim.knobs.set('gpt-4o-prod', { status: 429, retryAfter: 30 });
    const limited = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: chat('az-chat') });
    expect(limited.status, limited.text).to.equal(429);
    expect(limited.body.error.code).to.equal('upstream_rate_limited');
    env().sim.knobs.set('gpt-4o-prod', { status: 401 });
    const refused = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: chat('az-chat') });
    expect(refused.status, refused.text).to.equal(502);
    expect(refused.body.error.code).to.equal('upstream_auth_failed');
    expect(refused.text).to.not.include(KEY);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
  });
});
