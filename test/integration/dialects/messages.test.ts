import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { encode as encodeO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { encode as encodeCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse, type SseEvent } from '../../helpers/sse-events';
import { waitFor } from '../../helpers/wait';
import { UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';
import { poolModel, rndId, simDeployment } from '../../helpers/pool-models';

const V = { 'anthropic-version': '2023-06-01' };
const body = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  max_tokens: 256,
  messages: [{ role: 'user', content: 'hello messages dialect' }],
  ...extra,
});
const weather = { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object', properties: { query: { type: 'string' } } } };

/** The event sequence with block indices and delta types; runs of identical deltas collapse to one. */
function shape(events: SseEvent[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    expect(e.event, 'SSE event name equals data.type').to.equal(e.data.type);
    let s = e.data.type as string;
    if (s === 'content_block_start') s += `:${e.data.index}:${e.data.content_block.type}`;
    if (s === 'content_block_delta') s += `:${e.data.index}:${e.data.delta.type}`;
    if (s === 'content_block_stop') s += `:${e.data.index}`;
    if (out.at(-1) !== s || !s.startsWith('content_block_delta')) out.push(s);
  }
  return out;
}

const deltaText = (events: SseEvent[], type: string, field: string) =>
  events.filter((e) => e.data.type === 'content_block_delta' && e.data.delta.type === type).map((e) => e.data.delta[field]).join('');

const resetSimLog = () => (env().sim.log.entries.length = 0);

/** Polls until the condition holds; fails the test when it never does. */
async function until(cond: () => boolean | Promise<boolean>): Promise<void> {
  expect(await waitFor(cond, 3000), 'condition met in time').to.equal(true);
}

async function usageFor(requestId: string) {
  await usageSettled();
  return UsageEvent.findAll({ where: { requestId } });
}

describe('POST /v1/messages', () => {
  let o: TestOrg;
  let h: Record<string, string>;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    h = { ...keyHeader(o.key), ...V };
  });

  for (const [model, upstream, path] of [
    ['sim-chat', 'sim-chat-1', '/v1/chat/completions'],
    ['sim-claude', 'sim-claude-1', '/v1/messages'],
  ] as const) {
    describe(`on ${model} (upstream ${path})`, () => {
      it('answers a Message with text, stop reason, usage and a usage event', async () => {
        const r = await call('POST', '/v1/messages', { headers: h, json: body(model, { system: 'Be brief.' }) });
        expect(r.status, r.text).to.equal(200);
        expect(r.body).to.include({ type: 'message', role: 'assistant', model, stop_reason: 'end_turn', stop_sequence: null });
        expect(r.body.id).to.match(/^msg_/);
        expect(r.body.content).to.have.length(1);
        expect(r.body.content[0].type).to.equal('text');
        expect(r.body.content[0].text).to.include('hello messages dialect');
        expect(r.body.usage.input_tokens).to.be.greaterThan(0);
        expect(r.body.usage.output_tokens).to.be.greaterThan(0);
        const sent = env().sim.log.entries;
        expect(sent).to.have.length(1);
        expect(sent[0].path).to.equal(path);
        expect(sent[0].model).to.equal(upstream);
        const events = await usageFor(r.headers.get('x-service-request-id')!);
        expect(events).to.have.length(1);
        expect(events[0]).to.include({ orgId: o.org.id, model, lane: 'interactive', modality: 'chat' });
        expect(events[0].outputTokens).to.equal(r.body.usage.output_tokens);
      });

      it('streams the Anthropic event sequence with block indices', async () => {
        const s = await postSse('/v1/messages', h, body(model, { stream: true }));
        expect(s.status, s.text).to.equal(200);
        expect(s.contentType).to.match(/^text\/event-stream/);
        expect(shape(s.events)).to.deep.equal([
          'message_start',
          'content_block_start:0:text',
          'ping',
          'content_block_delta:0:text_delta',
          'content_block_stop:0',
          'message_delta',
          'message_stop',
        ]);
        expect(s.events[0].data.message).to.include({ model, role: 'assistant', type: 'message' });
        expect(s.events[0].data.message.content).to.deep.equal([]);
        expect(deltaText(s.events, 'text_delta', 'text')).to.include('hello messages dialect');
        const delta = s.events.find((e) => e.data.type === 'message_delta')!.data;
        expect(delta.delta.stop_reason).to.equal('end_turn');
        expect(delta.usage.output_tokens).to.be.greaterThan(0);
      });

      it('streams tool use as a tool_use block with input_json_delta', async () => {
        const s = await postSse('/v1/messages', h, body(model, { stream: true, tools: [weather], tool_choice: { type: 'any' } }));
        expect(shape(s.events)).to.deep.equal([
          'message_start',
          'content_block_start:0:tool_use',
          'ping',
          'content_block_delta:0:input_json_delta',
          'content_block_stop:0',
          'message_delta',
          'message_stop',
        ]);
        const start = s.events.find((e) => e.data.type === 'content_block_start')!.data.content_block;
        expect(start).to.include({ type: 'tool_use', name: 'get_weather' });
        expect(start.id).to.be.a('string').and.not.equal('');
        expect(JSON.parse(deltaText(s.events, 'input_json_delta', 'partial_json'))).to.deep.equal({ query: 'hello messages dialect' });
        expect(s.events.find((e) => e.data.type === 'message_delta')!.data.delta.stop_reason).to.equal('tool_use');
      });

      it('round-trips tool_use and tool_result', async () => {
        const first = await call('POST', '/v1/messages', { headers: h, json: body(model, { tools: [weather], messages: [{ role: 'user', content: 'please use a tool for Paris' }] }) });
        expect(first.status, first.text).to.equal(200);
        expect(first.body.stop_reason).to.equal('tool_use');
        const use = first.body.content.find((b: { type: string }) => b.type === 'tool_use');
        expect(use).to.include({ name: 'get_weather' });
        expect(use.input).to.deep.equal({ query: 'please use a tool for Paris' });
        const second = await call('POST', '/v1/messages', {
          headers: h,
          json: body(model, {
            tools: [weather],
            messages: [
              { role: 'user', content: 'please use a tool for Paris' },
              { role: 'assistant', content: first.body.content },
              { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny and warm' }] },
            ],
          }),
        });
        expect(second.status, second.text).to.equal(200);
        expect(second.body.stop_reason).to.equal('end_turn');
        expect(second.body.content[0].text).to.include('sunny and warm');
        const sent = env().sim.log.entries[1].body as { messages: Array<Record<string, unknown>> };
        if (model === 'sim-chat') {
          expect(sent.messages[1]).to.deep.include({ role: 'assistant', content: null });
          expect((sent.messages[1].tool_calls as Array<{ id: string }>)[0].id).to.equal(use.id);
          expect(sent.messages[2]).to.deep.equal({ role: 'tool', tool_call_id: use.id, content: 'sunny and warm' });
        } else {
          expect(sent.messages[2]).to.deep.equal({ role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny and warm' }] });
        }
      });
    });
  }

  it('native bypass: thinking blocks are streamed and carried across turns unchanged', async () => {
    const s = await postSse('/v1/messages', h, body('sim-claude', { stream: true, max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, tools: [weather], tool_choice: { type: 'any' } }));
    expect(shape(s.events)).to.deep.equal([
      'message_start',
      'content_block_start:0:thinking',
      'ping',
      'content_block_delta:0:thinking_delta',
      'content_block_delta:0:signature_delta',
      'content_block_stop:0',
      'content_block_start:1:tool_use',
      'content_block_delta:1:input_json_delta',
      'content_block_stop:1',
      'message_delta',
      'message_stop',
    ]);
    const assistant = [
      { type: 'thinking', thinking: deltaText(s.events, 'thinking_delta', 'thinking'), signature: 'sim-signature' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { query: 'x' } },
    ];
    const follow = body('sim-claude', {
      // a budget below max_tokens, as Anthropic requires
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: [weather],
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: assistant },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'rain' }] },
      ],
    });
    const r = await call('POST', '/v1/messages', { headers: h, json: follow });
    expect(r.status, r.text).to.equal(200);
    expect((env().sim.log.entries[1].body as { messages: unknown[] }).messages[1]).to.deep.equal({ role: 'assistant', content: assistant });
  });

  it('translated path: thinking blocks are not sent to an OpenAI-compatible upstream, the rest of the turn is', async () => {
    const r = await call('POST', '/v1/messages', {
      headers: h,
      json: body('sim-chat', {
        messages: [
          { role: 'user', content: 'q1' },
          { role: 'assistant', content: [{ type: 'thinking', thinking: 'secret plan', signature: 'sig' }, { type: 'text', text: 'a1' }] },
          { role: 'user', content: 'q2' },
        ],
      }),
    });
    expect(r.status, r.text).to.equal(200);
    const sent = env().sim.log.entries[0].body as { messages: unknown[] };
    expect(sent.messages).to.deep.equal([
      { role: 'user', content: 'q1' },
      { role: 'assistant', content: 'a1' },
      { role: 'user', content: 'q2' },
    ]);
  });

  it('translated path: a failed tool_result and its image reach an OpenAI-compatible upstream as chat has them (text prefixed "Error: ", the image in a user message), no field chat lacks', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const r = await call('POST', '/v1/messages', {
      headers: h,
      json: body('sim-chat', {
        tools: [weather],
        messages: [
          { role: 'user', content: 'weather?' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_9', name: 'get_weather', input: { query: 'x' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', is_error: true, content: [{ type: 'text', text: 'radar down' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }] }] },
        ],
      }),
    });
    expect(r.status, r.text).to.equal(200);
    const sent = env().sim.log.entries[0].body as { messages: unknown[] };
    expect(sent.messages.slice(2)).to.deep.equal([
      { role: 'tool', tool_call_id: 'toolu_9', content: 'Error: radar down' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] },
    ]);
  });

  it('reports max_tokens and stop_sequence stop reasons', async () => {
    const cut = await call('POST', '/v1/messages', { headers: h, json: body('sim-chat', { max_tokens: 3 }) });
    expect(cut.body.stop_reason).to.equal('max_tokens');
    // an OpenAI-compatible upstream gets the cap as max_completion_tokens (max_tokens is deprecated there, refused by o-series models)
    expect(env().sim.log.entries[0].body).to.deep.include({ max_completion_tokens: 3 }).and.not.have.property('max_tokens');
    const native = await call('POST', '/v1/messages', { headers: h, json: body('sim-claude', { stop_sequences: ['messages'] }) });
    expect(native.body).to.include({ stop_reason: 'stop_sequence', stop_sequence: 'messages' });
  });

  it('sends images and documents upstream in each wire format', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const content = [
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc body' }, title: 'Notes' },
      { type: 'text', text: 'describe' },
    ];
    const r1 = await call('POST', '/v1/messages', { headers: h, json: body('sim-chat', { messages: [{ role: 'user', content }] }) });
    expect(r1.status, r1.text).to.equal(200);
    const r2 = await call('POST', '/v1/messages', { headers: h, json: body('sim-claude', { messages: [{ role: 'user', content }] }) });
    expect(r2.status, r2.text).to.equal(200);
    const [openai, native] = env().sim.log.entries.map((e) => (e.body as { messages: Array<{ content: unknown }> }).messages[0].content);
    expect(openai).to.deep.equal([
      { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
      { type: 'text', text: 'Notes\n\ndoc body' },
      { type: 'text', text: 'describe' },
    ]);
    expect(native).to.deep.equal(content);
  });

  it("a document by URL goes as a url source to Anthropic's API and is refused before an OpenAI one (which reads base64 only) and a self-hosted Anthropic-shaped one (which would fetch it), unbilled", async () => {
    const content = [{ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }, { type: 'text', text: 'summarise' }];
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    const openai = await poolModel([simDeployment('oa', { inline_image_urls: false })]);
    const r1 = await call('POST', '/v1/messages', { headers: h, json: body(openai, { messages: [{ role: 'user', content }] }) });
    expect(r1.status, r1.text).to.equal(400);
    expect(r1.body, 'plain envelope').to.have.all.keys('error');
    expect(r1.body.error).to.include({ code: 'unsupported_parameter', type: 'invalid_request_error' });
    expect(r1.body.error.message).to.include('messages[0].content[0]');
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
    // sim-claude's provider is not Anthropic's host: a server the operator runs, which would fetch the URL itself (docs/providers.md)
    const selfHosted = await call('POST', '/v1/messages', { headers: h, json: body('sim-claude', { messages: [{ role: 'user', content }] }) });
    expect([selfHosted.status, selfHosted.body.error?.type], selfHosted.text).to.deep.equal([400, 'invalid_request_error']);
    expect(selfHosted.body.error.message).to.include('messages[0].content[0].source.url');
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    const vendor = await poolModel([{ name: 'claude', provider: 'simulator-anthropic', upstream: `claude-${rndId()}`, inline_image_urls: false }]);
    const r2 = await call('POST', '/v1/messages', { headers: h, json: body(vendor, { messages: [{ role: 'user', content }] }) });
    expect(r2.status, r2.text).to.equal(200);
    expect((env().sim.log.entries[0].body as { messages: Array<{ content: unknown }> }).messages[0].content).to.deep.equal(content);
  });

  it('reports an upstream failure mid-stream as an in-band error event, and bills nothing', async () => {
    await fetch(`${env().simUrl}/_sim/knobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ dropAfterChunks: 4, tokenDelayMs: 10 }) });
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    for (const model of ['sim-chat', 'sim-claude']) {
      const s = await postSse('/v1/messages', h, body(model, { stream: true }));
      expect(s.status).to.equal(200);
      expect(s.events[0].data.type, 'the stream had started').to.equal('message_start');
      const last = s.events.at(-1)!;
      expect(last.event).to.equal('error');
      expect(last.data).to.deep.equal({ type: 'error', error: { type: 'api_error', code: 'upstream_error', message: last.data.error.message } });
      expect(last.data.error.message).to.be.a('string').and.not.equal('');
      expect(s.events.some((e) => e.data.type === 'message_stop')).to.equal(false);
    }
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
  });

  it('cancels the upstream call and frees the lane when a streaming client disconnects', async () => {
    const one = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 1 } });
    const headers = { ...keyHeader(one.key), ...V, 'content-type': 'application/json' };
    await fetch(`${env().simUrl}/_sim/knobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tokenDelayMs: 200 }) });
    for (const model of ['sim-chat', 'sim-claude']) {
      resetSimLog();
      const ac = new AbortController();
      const res = await fetch(`${env().gw.url}/v1/messages`, { method: 'POST', headers, body: JSON.stringify(body(model, { stream: true })), signal: ac.signal });
      expect(res.status).to.equal(200);
      await res.body!.getReader().read(); // the first event arrived
      ac.abort();
      await until(() => env().sim.log.entries[0]?.aborted === true);
      // the lease was released: with a lane count of 1, the next request is admitted
      await until(async () => (await call('POST', '/v1/messages', { headers, json: body(model) })).status === 200);
    }
  });

  it('runs -background ids on the background lane and attributes the project', async () => {
    const r = await call('POST', '/v1/messages', { headers: { ...h, 'SERVICE-PROJECT-ID': o.project.id }, json: body('sim-claude-background') });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.model).to.equal('sim-claude-background');
    const [ev] = await usageFor(r.headers.get('x-service-request-id')!);
    expect(ev).to.include({ lane: 'background', projectId: o.project.id, model: 'sim-claude-background' });
  });

  it('accepts the key as x-api-key (svc_), as an Anthropic client sends it', async () => {
    const r = await call('POST', '/v1/messages', { headers: { 'x-api-key': o.key, ...V }, json: body('sim-chat') });
    expect(r.status, r.text).to.equal(200);
  });
});

describe('messages dialect errors', () => {
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
  });

  async function expectRefused(r: Awaited<ReturnType<typeof call>>, status: number, code: string, type: string) {
    expect(r.status, r.text).to.equal(status);
    expect(r.body, 'plain envelope, not wrapped').to.have.all.keys('error');
    expect(r.body.error).to.include({ code, type });
    expect(r.body.error.message).to.be.a('string').and.not.equal('');
    expect(r.text).not.to.match(/at .*\.js:\d+/); // no stack trace
  }

  it('requires a well-formed anthropic-version header (400), on both paths', async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
      await expectRefused(await call('POST', path, { headers: keyHeader(o.key), json: body('sim-chat') }), 400, 'anthropic_version_required', 'invalid_request_error');
      for (const bad of ['yesterday', '2023-6-1', '2023-13-01', '2023-02-30', '20230601']) {
        const r = await call('POST', path, { headers: { ...keyHeader(o.key), 'anthropic-version': bad }, json: body('sim-chat') });
        await expectRefused(r, 400, 'anthropic_version_invalid', 'invalid_request_error');
      }
    }
    expect(env().sim.log.entries).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
  });

  it('refuses bad requests in the plain envelope (with the Anthropic error type) without reaching the upstream or billing', async () => {
    const h = { ...keyHeader(o.key), ...V };
    const cases: Array<[unknown, number, string, string]> = [
      [{ model: 'sim-chat', messages: [{ role: 'user', content: 'x' }] }, 400, 'invalid_request', 'invalid_request_error'],
      [{ model: 'sim-chat', max_tokens: 10, messages: [] }, 400, 'invalid_request', 'invalid_request_error'],
      [{ model: 'sim-chat', max_tokens: 10, messages: [{ role: 'system', content: 'x' }] }, 400, 'invalid_request', 'invalid_request_error'],
      [{ model: 'sim-chat', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64' } }] }] }, 400, 'invalid_request', 'invalid_request_error'],
      [{ model: 'sim-chat', max_tokens: 10, temperature: 1.5, messages: [{ role: 'user', content: 'x' }] }, 400, 'invalid_request', 'invalid_request_error'],
      [{ model: 'sim-chat', max_tokens: 10, tool_choice: { type: 'tool' }, messages: [{ role: 'user', content: 'x' }] }, 400, 'invalid_request', 'invalid_request_error'],
      [{ model: 'sim-chat', max_tokens: 10, tools: [{ type: 'bash_20250124', name: 'bash' }], messages: [{ role: 'user', content: 'x' }] }, 400, 'unsupported_tool', 'invalid_request_error'],
      [{ model: 'nope', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }, 404, 'model_not_found', 'not_found_error'],
      [{ model: 'sim-embed', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }, 400, 'model_not_chat_capable', 'invalid_request_error'],
    ];
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    for (const [json, status, code, type] of cases) await expectRefused(await call('POST', '/v1/messages', { headers: h, json }), status, code, type);
    await expectRefused(await call('POST', '/v1/messages', { headers: { ...h, 'content-type': 'application/json' }, raw: '{"model": ' }), 400, 'invalid_json', 'invalid_request_error');
    await expectRefused(await call('GET', '/v1/messages', { headers: h }), 405, 'method_not_allowed', 'invalid_request_error');
    await expectRefused(await call('POST', '/v1/messages', { headers: { ...h, 'content-type': 'text/plain' }, raw: 'hi' }), 415, 'unsupported_media_type', 'invalid_request_error');
    const huge = JSON.stringify(body('sim-chat', { messages: [{ role: 'user', content: 'x'.repeat(33 * 1024 * 1024) }] }));
    await expectRefused(await call('POST', '/v1/messages', { headers: { ...h, 'content-type': 'application/json' }, raw: huge }), 413, 'payload_too_large', 'request_too_large');
    expect(env().sim.log.entries).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
  });

  it('answers auth failures in the plain envelope, on both paths, before the version header is checked', async () => {
    for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
      const variants: Array<Record<string, string>> = [{ 'x-api-key': 'svc_notarealkey', ...V }, { ...V }, { authorization: `Bearer svc_platform_${'c'.repeat(40)}`, ...V }, { 'x-api-key': 'svc_notarealkey' }];
      for (const headers of variants) {
        const r = await call('POST', path, { headers, json: body('sim-chat') });
        expect(r.status, `${path} ${JSON.stringify(headers)}`).to.equal(401);
        expect(r.body).to.deep.equal({ error: { code: 'INVALID_API_KEY', message: r.body.error.message, type: 'authentication_error' } });
      }
    }
    expect(env().sim.log.entries).to.have.length(0);
  });

  it('answers 429 CONCURRENT_REQUEST_LIMIT_EXCEEDED with Retry-After when the lanes are full', async () => {
    const full = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 0 } });
    const r = await call('POST', '/v1/messages', { headers: { ...keyHeader(full.key), ...V }, json: body('sim-chat') });
    await expectRefused(r, 429, 'CONCURRENT_REQUEST_LIMIT_EXCEEDED', 'rate_limit_error');
    expect(Number(r.headers.get('retry-after'))).to.be.greaterThan(0);
    expect(env().sim.log.entries).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: full.org.id } })).to.equal(0);
  });

  it('maps upstream failures to Anthropic error types, billing nothing', async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    for (const [status, expected, code, type] of [
      [500, 502, 'upstream_error', 'api_error'],
      [503, 503, 'upstream_unavailable', 'overloaded_error'],
      [429, 429, 'upstream_rate_limited', 'rate_limit_error'],
      [400, 400, 'upstream_invalid_request', 'invalid_request_error'],
      [401, 502, 'upstream_auth_failed', 'api_error'], // the platform's credential: not the caller's fault
    ] as const) {
      await fetch(`${env().simUrl}/_sim/knobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status, retryAfter: 0 }) });
      for (const model of ['sim-chat', 'sim-claude']) {
        for (const stream of [false, true]) {
          const r = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V }, json: body(model, { stream }) });
          await expectRefused(r, expected, code, type);
          if (expected === 429 || expected === 503) expect(Number(r.headers.get('retry-after')), `${status} Retry-After`).to.be.at.least(1);
        }
      }
    }
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
  });
});

describe('POST /v1/messages/count_tokens', () => {
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
  });

  it("counts with the model's tokenizer profile, without calling the upstream or billing", async () => {
    const text = 'Tokenizers differ: naïve café façade — 東京 and émigrés ☃';
    const req = (model: string) => ({ model, messages: [{ role: 'user', content: text }] });
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    const a = await call('POST', '/v1/messages/count_tokens', { headers: { ...keyHeader(o.key), ...V }, json: req('sim-chat') });
    const b = await call('POST', '/v1/messages/count_tokens', { headers: { ...keyHeader(o.key), ...V }, json: req('sim-claude') });
    expect(a.status, a.text).to.equal(200);
    // 3 per request + 3 per message of framing, plus the text under each model's profile
    expect(a.body).to.deep.equal({ input_tokens: 6 + encodeO200k(text).length });
    expect(b.body).to.deep.equal({ input_tokens: 6 + encodeCl100k(text).length });
    expect(a.body.input_tokens).not.to.equal(b.body.input_tokens);
    expect(env().sim.log.entries).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
  });

  it('counts special-token text such as <|endoftext|> as ordinary text instead of failing', async () => {
    const h = { ...keyHeader(o.key), ...V };
    const r = await call('POST', '/v1/messages/count_tokens', { headers: h, json: { model: 'sim-chat', messages: [{ role: 'user', content: 'a <|endoftext|> b' }] } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.input_tokens).to.equal(6 + encodeO200k('a <|endoftext|> b', { disallowedSpecial: new Set() }).length);
  });

  it('counts system, tools, tool results and images', async () => {
    const h = { ...keyHeader(o.key), ...V };
    const base = { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] };
    const plain = (await call('POST', '/v1/messages/count_tokens', { headers: h, json: base })).body.input_tokens;
    const withSystem = (await call('POST', '/v1/messages/count_tokens', { headers: h, json: { ...base, system: 'You are a helpful assistant.' } })).body.input_tokens;
    const withTools = (await call('POST', '/v1/messages/count_tokens', { headers: h, json: { ...base, tools: [weather] } })).body.input_tokens;
    const withImage = (
      await call('POST', '/v1/messages/count_tokens', {
        headers: h,
        json: { model: 'sim-chat', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }] }] },
      })
    ).body.input_tokens;
    expect(withSystem).to.equal(plain + encodeO200k('You are a helpful assistant.').length);
    expect(withTools).to.be.greaterThan(plain + 10);
    expect(withImage).to.equal(plain + 1600);
  });

  it("counts the current assistant turn's thinking only: earlier turns' thinking and redacted thinking are not input tokens (Anthropic's token counting)", async () => {
    const h = { ...keyHeader(o.key), ...V };
    const thought = 'A long chain of careful reasoning about the weather in Paris and Lyon';
    const think = { type: 'thinking', thinking: thought, signature: 'sig' };
    const redacted = { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw' };
    const count = async (messages: unknown[]) => {
      const r = await call('POST', '/v1/messages/count_tokens', { headers: h, json: { model: 'sim-chat', tools: [weather], messages } });
      expect(r.status, r.text).to.equal(200);
      return r.body.input_tokens as number;
    };
    const use = { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { query: 'Paris' } };
    const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }] };
    // a finished exchange, then a new question: the earlier turn's thinking counts for nothing
    const earlier = (blocks: unknown[]) => [{ role: 'user', content: 'weather?' }, { role: 'assistant', content: [...blocks, use] }, result, { role: 'assistant', content: 'Sunny.' }, { role: 'user', content: 'and tomorrow?' }];
    expect(await count(earlier([think, redacted]))).to.equal(await count(earlier([])));
    // mid tool loop (the results answer the turn being written): its thinking counts, as its text
    const current = (blocks: unknown[]) => [{ role: 'user', content: 'weather?' }, { role: 'assistant', content: [...blocks, use] }, result];
    expect(await count(current([think]))).to.equal((await count(current([]))) + encodeO200k(thought).length);
  });

  it('refuses an unknown model (404) and a missing messages field (400)', async () => {
    const h = { ...keyHeader(o.key), ...V };
    const r1 = await call('POST', '/v1/messages/count_tokens', { headers: h, json: { model: 'nope', messages: [{ role: 'user', content: 'x' }] } });
    expect(r1.status).to.equal(404);
    expect(r1.body.error).to.include({ code: 'model_not_found', type: 'not_found_error' });
    const r2 = await call('POST', '/v1/messages/count_tokens', { headers: h, json: { model: 'sim-chat' } });
    expect(r2.status).to.equal(400);
    expect(r2.body).to.deep.equal({ error: { type: 'invalid_request_error', code: 'invalid_request', message: r2.body.error.message } });
    const r3 = await call('POST', '/v1/messages/count_tokens', { headers: h, json: { model: 'sim-embed', messages: [{ role: 'user', content: 'x' }] } });
    expect(r3.status).to.equal(400);
    expect(r3.body.error).to.include({ code: 'model_not_chat_capable', type: 'invalid_request_error' });
    const r4 = await call('POST', '/v1/messages/count_tokens', { headers: { ...h, 'content-type': 'application/json' }, raw: '{"model":' });
    expect(r4.status).to.equal(400);
    expect(r4.body.error).to.include({ code: 'invalid_json', type: 'invalid_request_error' });
    const r5 = await call('GET', '/v1/messages/count_tokens', { headers: h });
    expect(r5.status).to.equal(405);
    expect(r5.body.error).to.include({ code: 'method_not_allowed', type: 'invalid_request_error' });
    for (const r of [r1, r2, r3, r4, r5]) expect(r.text).not.to.match(/at .*\.js:\d+/);
    expect(env().sim.log.entries).to.have.length(0);
  });
});

describe('@anthropic-ai/sdk through the gateway', () => {
  let client: Anthropic;
  beforeEach(resetSim);
  before(async () => {
    const o = await buildOrg(env().redis);
    client = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
  });

  for (const model of ['sim-chat', 'sim-claude']) {
    it(`messages.create, messages.stream with tool use and countTokens on ${model}`, async () => {
      const m = await client.messages.create({ model, max_tokens: 200, messages: [{ role: 'user', content: 'sdk says hi' }] });
      expect(m.model).to.equal(model);
      expect(m.content[0].type).to.equal('text');
      expect((m.content[0] as Anthropic.TextBlock).text).to.include('sdk says hi');
      expect(m.stop_reason).to.equal('end_turn');

      const stream = client.messages.stream({ model, max_tokens: 200, tools: [weather as Anthropic.Tool], messages: [{ role: 'user', content: 'use a tool for Rome' }] });
      let json = '';
      stream.on('inputJson', (partial) => (json += partial));
      const final = await stream.finalMessage();
      expect(final.stop_reason).to.equal('tool_use');
      const use = final.content.find((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock;
      expect(use.name).to.equal('get_weather');
      expect(use.input).to.deep.equal({ query: 'use a tool for Rome' });
      expect(json).to.equal(JSON.stringify({ query: 'use a tool for Rome' }));
      expect(final.usage.output_tokens).to.be.greaterThan(0);
      expect(final.usage.input_tokens).to.be.greaterThan(0);

      const next = await client.messages.create({
        model,
        max_tokens: 200,
        tools: [weather as Anthropic.Tool],
        messages: [
          { role: 'user', content: 'use a tool for Rome' },
          { role: 'assistant', content: final.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'clear skies' }] },
        ],
      });
      expect((next.content[0] as Anthropic.TextBlock).text).to.include('clear skies');

      const count = await client.messages.countTokens({ model, messages: [{ role: 'user', content: 'count me' }] });
      expect(count.input_tokens).to.be.greaterThan(6);
    });
  }

  it('raises the SDK error classes, with type and message, from the plain envelope', async () => {
    let err: unknown;
    try {
      await client.messages.create({ model: 'nope', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(Anthropic.NotFoundError);
    expect((err as InstanceType<typeof Anthropic.NotFoundError>).type).to.equal('not_found_error');
    expect((err as InstanceType<typeof Anthropic.NotFoundError>).apiMessage).to.be.a('string').and.include('nope');
    const bad = new Anthropic({ apiKey: 'svc_wrong', baseURL: env().gw.url, maxRetries: 0 });
    let authErr: unknown;
    try {
      await bad.messages.create({ model: 'sim-chat', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
    } catch (e) {
      authErr = e;
    }
    expect(authErr).to.be.instanceOf(Anthropic.AuthenticationError);
  });
});
