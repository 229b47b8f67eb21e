import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { expectOpenAI } from '../../helpers/conformance';
import { postSse, type SseEvent } from '../../helpers/sse-events';
import { StoredResponse, UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';

const lookup = { type: 'function', name: 'lookup', description: 'Look something up', parameters: { type: 'object', properties: { query: { type: 'string' } } } };

/** Event types in order, runs of identical delta events collapsed to one. */
function shape(events: SseEvent[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    expect(e.event).to.equal(e.data.type);
    const s = e.data.type as string;
    if (out.at(-1) !== s || !s.endsWith('.delta')) out.push(s);
  }
  return out;
}

type Sent = { messages: Array<Record<string, unknown>> };
const sentBodies = () => env().sim.log.entries.map((e) => e.body as Sent);

describe('POST /v1/responses', () => {
  let o: TestOrg;
  let h: Record<string, string>;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    h = keyHeader(o.key);
  });

  for (const [model, path] of [
    ['sim-chat', '/v1/chat/completions'],
    ['sim-claude', '/v1/messages'],
  ] as const) {
    describe(`on ${model} (upstream ${path})`, () => {
      it('answers a Response with a message output item, usage and a usage event, and stores it', async () => {
        const r = await call('POST', '/v1/responses', { headers: h, json: { model, input: 'hello responses', instructions: 'Be brief.' } });
        expect(r.status, r.text).to.equal(200);
        expect(r.body).to.include({ object: 'response', status: 'completed', model, instructions: 'Be brief.', previous_response_id: null, error: null });
        expect(r.body.id).to.match(/^resp_/);
        expect(r.body.output).to.have.length(1);
        const item = r.body.output[0];
        expect(item).to.include({ type: 'message', role: 'assistant', status: 'completed' });
        expect(item.content[0].type).to.equal('output_text');
        expect(item.content[0].text).to.include('hello responses');
        expect(r.body.usage.input_tokens).to.be.greaterThan(0);
        expect(r.body.usage.total_tokens).to.equal(r.body.usage.input_tokens + r.body.usage.output_tokens);
        expect(env().sim.log.entries[0].path).to.equal(path);
        await usageSettled();
        const [ev] = await UsageEvent.findAll({ where: { requestId: r.headers.get('x-service-request-id')! } });
        expect(ev).to.include({ orgId: o.org.id, model, modality: 'chat', lane: 'interactive' });
        const stored = await StoredResponse.findByPk(r.body.id);
        expect(stored?.orgId).to.equal(o.org.id);
        const got = await call('GET', `/v1/responses/${r.body.id}`, { headers: h });
        expect(got.body).to.deep.equal(r.body);
      });

      it('streams the Responses events in order with sequence numbers', async () => {
        const s = await postSse('/v1/responses', h, { model, input: 'stream this please', stream: true });
        expect(s.status, s.text).to.equal(200);
        expect(shape(s.events)).to.deep.equal([
          'response.created',
          'response.in_progress',
          'response.output_item.added',
          'response.content_part.added',
          'response.output_text.delta',
          'response.output_text.done',
          'response.content_part.done',
          'response.output_item.done',
          'response.completed',
        ]);
        expect(s.events.map((e) => e.data.sequence_number)).to.deep.equal(s.events.map((_, i) => i));
        const deltas = s.events.filter((e) => e.data.type === 'response.output_text.delta');
        const text = deltas.map((e) => e.data.delta).join('');
        expect(text).to.include('stream this please');
        expect(deltas.every((e) => e.data.output_index === 0 && e.data.content_index === 0)).to.equal(true);
        expect(s.events.find((e) => e.data.type === 'response.output_text.done')!.data.text).to.equal(text);
        const done = s.events.at(-1)!.data.response;
        expect(done).to.include({ status: 'completed', model });
        expect(done.output[0].content[0].text).to.equal(text);
        expect(done.usage.output_tokens).to.be.greaterThan(0);
        expect(s.events[0].data.response.status).to.equal('in_progress');
      });

      it('streams a function call with argument deltas', async () => {
        const s = await postSse('/v1/responses', h, { model, input: 'find cats', tools: [lookup], tool_choice: 'required', stream: true });
        expect(shape(s.events)).to.deep.equal([
          'response.created',
          'response.in_progress',
          'response.output_item.added',
          'response.function_call_arguments.delta',
          'response.function_call_arguments.done',
          'response.output_item.done',
          'response.completed',
        ]);
        const added = s.events[2].data.item;
        expect(added).to.include({ type: 'function_call', name: 'lookup', status: 'in_progress', arguments: '' });
        const args = s.events.filter((e) => e.data.type === 'response.function_call_arguments.delta').map((e) => e.data.delta).join('');
        expect(JSON.parse(args)).to.deep.equal({ query: 'find cats' });
        const item = s.events.at(-1)!.data.response.output[0];
        expect(item).to.include({ type: 'function_call', name: 'lookup', arguments: args, call_id: added.call_id, status: 'completed' });
      });

      it('round-trips function_call / function_call_output through previous_response_id', async () => {
        const first = await call('POST', '/v1/responses', { headers: h, json: { model, input: 'please call the tool for dogs', tools: [lookup] } });
        expect(first.status, first.text).to.equal(200);
        const fc = first.body.output[0];
        expect(fc).to.include({ type: 'function_call', name: 'lookup' });
        const second = await call('POST', '/v1/responses', {
          headers: h,
          json: { model, previous_response_id: first.body.id, tools: [lookup], input: [{ type: 'function_call_output', call_id: fc.call_id, output: '{"dogs": 3}' }] },
        });
        expect(second.status, second.text).to.equal(200);
        expect(second.body.previous_response_id).to.equal(first.body.id);
        expect(second.body.output[0].content[0].text).to.include('3');
        const upstream = sentBodies()[1];
        if (model === 'sim-chat') {
          expect(upstream.messages).to.deep.equal([
            { role: 'user', content: 'please call the tool for dogs' },
            { role: 'assistant', content: null, tool_calls: [{ id: fc.call_id, type: 'function', function: { name: 'lookup', arguments: fc.arguments } }] },
            { role: 'tool', tool_call_id: fc.call_id, content: '{"dogs": 3}' },
          ]);
        } else {
          expect(upstream.messages).to.deep.equal([
            { role: 'user', content: [{ type: 'text', text: 'please call the tool for dogs' }] },
            { role: 'assistant', content: [{ type: 'tool_use', id: fc.call_id, name: 'lookup', input: JSON.parse(fc.arguments) }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: fc.call_id, content: '{"dogs": 3}' }] },
          ]);
        }
      });
    });
  }

  it('continues a conversation with previous_response_id (instructions are not carried over)', async () => {
    const a = await call('POST', '/v1/responses', { headers: h, json: { model: 'sim-chat', input: 'first question', instructions: 'Old rules.' } });
    const b = await call('POST', '/v1/responses', { headers: h, json: { model: 'sim-chat', input: 'second question', previous_response_id: a.body.id, instructions: 'New rules.' } });
    expect(b.status, b.text).to.equal(200);
    const c = await call('POST', '/v1/responses', { headers: h, json: { model: 'sim-chat', input: [{ role: 'user', content: [{ type: 'input_text', text: 'third' }] }], previous_response_id: b.body.id } });
    expect(c.status, c.text).to.equal(200);
    const sent = sentBodies();
    expect(sent[1].messages).to.deep.equal([
      { role: 'system', content: 'New rules.' },
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: a.body.output[0].content[0].text },
      { role: 'user', content: 'second question' },
    ]);
    expect(sent[2].messages.map((m) => m.content)).to.deep.equal(['first question', a.body.output[0].content[0].text, 'second question', b.body.output[0].content[0].text, 'third']);
  });

  it('continues a conversation on another model, whatever its upstream speaks', async () => {
    const a = await call('POST', '/v1/responses', { headers: h, json: { model: 'sim-chat', input: 'started on chat' } });
    const b = await call('POST', '/v1/responses', { headers: h, json: { model: 'sim-claude', input: 'continued on claude', previous_response_id: a.body.id } });
    expect(b.status, b.text).to.equal(200);
    expect(b.body.model).to.equal('sim-claude');
    const sent = env().sim.log.entries[1];
    expect(sent.path).to.equal('/v1/messages');
    expect((sent.body as Sent).messages).to.deep.equal([
      { role: 'user', content: [{ type: 'text', text: 'started on chat' }] },
      { role: 'assistant', content: [{ type: 'text', text: a.body.output[0].content[0].text }] },
      { role: 'user', content: [{ type: 'text', text: 'continued on claude' }] },
    ]);
  });

  it("answers 404 response_not_found for another org's response id, and for store: false; a follow-up naming one OpenAI's 400 previous_response_not_found", async () => {
    const mine = await call('POST', '/v1/responses', { headers: h, json: { model: 'sim-chat', input: 'private' } });
    const unstored = await call('POST', '/v1/responses', { headers: h, json: { model: 'sim-chat', input: 'forget me', store: false } });
    expect(unstored.body.store).to.equal(false);
    const other = await buildOrg(env().redis);
    resetSim();
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: other.org.id } });
    for (const [key, id] of [[other.key, mine.body.id], [o.key, unstored.body.id], [o.key, 'resp_doesnotexist']]) {
      const r = await call('POST', '/v1/responses', { headers: keyHeader(key), json: { model: 'sim-chat', input: 'follow up', previous_response_id: id } });
      // what OpenAI answers (clients read the code to send the whole context again instead of the id)
      expect(r.status, r.text).to.equal(400);
      expect(r.body.error).to.deep.equal({ code: 'previous_response_not_found', message: `Previous response with id '${id}' not found.`, type: 'invalid_request_error', param: 'previous_response_id' });
      expectOpenAI('ErrorResponse', r.body);
    }
    const peek = await call('GET', `/v1/responses/${mine.body.id}`, { headers: keyHeader(other.key) });
    expect(peek.status).to.equal(404);
    expect(peek.body.error.code).to.equal('response_not_found');
    expect(peek.text).not.to.include('private');
    for (const id of [unstored.body.id, 'resp_doesnotexist', 'not-even-an-id']) {
      const r = await call('GET', `/v1/responses/${id}`, { headers: h });
      expect(r.status, id).to.equal(404);
      // OpenAI's words for it (its body: "Response with id '…' not found.", param null)
      expect(r.body.error).to.deep.equal({ code: 'response_not_found', message: `Response with id '${id}' not found.`, type: 'invalid_request_error', param: null });
    }
    expect(env().sim.log.entries).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: other.org.id } })).to.equal(before);
  });

  it('ends a stream the upstream broke with response.failed (status failed, its error), as the SDK reads it; nothing is billed, the failed Response is stored', async () => {
    await fetch(`${env().simUrl}/_sim/knobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ dropAfterChunks: 4, tokenDelayMs: 10 }) });
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    const s = await postSse('/v1/responses', h, { model: 'sim-chat', input: 'will break', stream: true });
    expect(s.status).to.equal(200);
    expect(s.events[0].data.type, 'the stream had started').to.equal('response.created');
    const last = s.events.at(-1)!;
    expect(last.event).to.equal('response.failed');
    expect(last.data.sequence_number).to.equal(s.events.length - 1);
    expect(last.data.response).to.include({ id: s.events[0].data.response.id, object: 'response', status: 'failed', completed_at: null, usage: null });
    expect(last.data.response.error).to.deep.equal({ code: 'server_error', message: last.data.response.error.message });
    expect(last.data.response.error.message).to.be.a('string').and.not.equal('');
    const cut = last.data.response.output.at(-1);
    expect(cut, 'the message cut by the failure').to.include({ type: 'message', status: 'incomplete' });
    expect(s.events.map((e) => e.data.type)).to.not.include.members(['response.completed', 'error']);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
    const id = s.events[0].data.response.id;
    // Retrievable at once, as the Response the stream ended with (OpenAI's retrieve answers any stored Response, its status failed and its error).
    const got = await call('GET', `/v1/responses/${id}`, { headers: h });
    expect(got.status, got.text).to.equal(200);
    expect(got.body).to.deep.equal(last.data.response);
    const items = await call('GET', `/v1/responses/${id}/input_items`, { headers: h });
    expect(items.status, items.text).to.equal(200);
    expect(items.body.data.map((i: { role: string; content: unknown }) => [i.role, i.content])).to.deep.equal([['user', [{ type: 'input_text', text: 'will break' }]]]);

    // The official SDK: the stream emits response.failed and finalResponse() is the failed Response.
    const client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const stream = client.responses.stream({ model: 'sim-chat', input: 'will break again' });
    const failedEvents: string[] = [];
    stream.on('response.failed', (ev) => failedEvents.push(ev.response.id));
    const final = await stream.finalResponse();
    expect(final.status).to.equal('failed');
    expect(final.error?.code).to.equal('server_error');
    expect(failedEvents).to.deep.equal([final.id]);
  });

  it('keeps no failed Response when store is false; a follow-up naming a failed one continues from its input, without the cut turn', async () => {
    await fetch(`${env().simUrl}/_sim/knobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ dropAfterChunks: 4, tokenDelayMs: 10 }) });
    const unstored = await postSse('/v1/responses', h, { model: 'sim-chat', input: 'will break unseen', stream: true, store: false });
    expect(unstored.events.at(-1)!.event).to.equal('response.failed');
    const gone = await call('GET', `/v1/responses/${unstored.events[0].data.response.id}`, { headers: h });
    expect(gone.status).to.equal(404);
    expect(gone.body.error.code).to.equal('response_not_found');

    await fetch(`${env().simUrl}/_sim/knobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ dropAfterChunks: 4, tokenDelayMs: 10 }) });
    const broken = await postSse('/v1/responses', h, { model: 'sim-chat', instructions: 'Be brief.', input: 'first try', stream: true });
    expect(broken.events.at(-1)!.event).to.equal('response.failed');
    resetSim();
    const next = await call('POST', '/v1/responses', { headers: h, json: { model: 'sim-chat', previous_response_id: broken.events[0].data.response.id, input: 'second try' } });
    expect(next.status, next.text).to.equal(200);
    expect(next.body).to.include({ status: 'completed', previous_response_id: broken.events[0].data.response.id });
    const sent = (env().sim.log.entries[0].body as { messages: unknown[] }).messages;
    expect(sent, 'the failed response’s input, then the new one; no assistant turn').to.deep.equal([
      { role: 'user', content: 'first try' },
      { role: 'user', content: 'second try' },
    ]);
  });

  it('answers upstream failures before the stream in the plain envelope with their codes; nothing is billed or stored', async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    const storedBefore = await StoredResponse.count({ where: { orgId: o.org.id } });
    for (const [status, expected, code] of [[500, 502, 'upstream_error'], [503, 503, 'upstream_unavailable'], [400, 400, 'upstream_invalid_request']] as const) {
      await fetch(`${env().simUrl}/_sim/knobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status, retryAfter: 0 }) });
      for (const model of ['sim-chat', 'sim-claude']) {
        for (const [path, stream] of [['/v1/responses', false], ['/v1/responses', true], ['/responses', false]] as const) {
          const r = await call('POST', path, { headers: h, json: { model, input: 'x', stream } });
          expect(r.status, `${status} ${model} ${path} stream=${stream}: ${r.text}`).to.equal(expected);
          expect(r.body).to.deep.equal({ error: { code, message: r.body.error.message, type: status === 400 ? 'invalid_request_error' : 'server_error', param: null } });
          expect(r.text).not.to.match(/at .*\.js:\d+/);
        }
      }
    }
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
    expect(await StoredResponse.count({ where: { orgId: o.org.id } })).to.equal(storedBefore);
  });

  it('is also served at POST /responses', async () => {
    const r = await call('POST', '/responses', { headers: h, json: { model: 'sim-chat', input: 'no prefix' } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.output[0].content[0].text).to.include('no prefix');
  });

  it('reports max_output_tokens cut-offs as incomplete', async () => {
    const r = await call('POST', '/v1/responses', { headers: h, json: { model: 'sim-chat', input: 'a long answer please with many words so that the reply runs past sixteen of them and gets cut short here', max_output_tokens: 16 } });
    expect(r.body).to.include({ status: 'incomplete' });
    expect(r.body.incomplete_details).to.deep.equal({ reason: 'max_output_tokens' });
    // max_tokens is deprecated in CreateChatCompletionRequest and refused by o-series models
    expect(sentBodies()[0]).to.deep.include({ max_completion_tokens: 16 }).and.not.have.property('max_tokens');
  });

  it('runs -background ids on the background lane and attributes the project', async () => {
    const r = await call('POST', '/v1/responses', { headers: { ...h, 'SERVICE-PROJECT-ID': o.project.id }, json: { model: 'sim-chat-background', input: 'later' } });
    expect(r.status, r.text).to.equal(200);
    await usageSettled();
    const [ev] = await UsageEvent.findAll({ where: { requestId: r.headers.get('x-service-request-id')! } });
    expect(ev).to.include({ lane: 'background', projectId: o.project.id });
  });

  it('refuses bad requests without reaching the upstream or billing', async () => {
    const cases: Array<[unknown, number, string]> = [
      // OpenAI's codes (responses-openai-refusals.test.ts checks their words)
      [{ input: 'x' }, 400, 'missing_required_parameter'],
      [{ model: 'sim-chat' }, 400, 'missing_required_parameter'],
      [{ model: 'sim-chat', input: [] }, 400, 'missing_required_parameter'],
      [{ model: 'sim-chat', input: 'x', temperature: 3 }, 400, 'decimal_above_max_value'],
      [{ model: 'sim-chat', input: 'x', background: true, store: false }, 400, 'invalid_request'],
      [{ model: 'sim-chat', input: 'x', conversation: 'conv_123' }, 404, 'conversation_not_found'],
      [{ model: 'sim-chat', input: 'x', conversation: { id: 'conv_123' } }, 404, 'conversation_not_found'],
      [{ model: 'sim-chat', input: 'x', conversation: 42 }, 400, 'invalid_type'],
      [{ model: 'sim-chat', input: 'x', conversation: {} }, 400, 'missing_required_parameter'],
      [{ model: 'sim-chat', input: [{ role: 'wizard', content: 'x' }] }, 400, 'invalid_value'],
      [{ model: 'sim-chat', input: [{ type: 'item_reference', id: 'x' }] }, 404, 'item_not_found'],
      [{ model: 'sim-chat', input: [{ type: 'item_reference' }] }, 400, 'missing_required_parameter'],
      [{ model: 'sim-chat', input: 'x', tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }] }, 400, 'unsupported_tool'],
      // metadata values are at most 512 characters, under the key __proto__ too (Joi skips own __proto__ keys)
      [{ model: 'sim-chat', input: 'x', metadata: { ['__proto__']: 'v'.repeat(513) } }, 400, 'string_above_max_length'],
      [{ model: 'nope', input: 'x' }, 400, 'model_not_found'], // the Responses API's 400 (responses-model-not-found.test.ts)
      [{ model: 'sim-embed', input: 'x' }, 400, 'model_not_chat_capable'],
    ];
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    for (const [json, status, code] of cases) {
      for (const path of ['/v1/responses', '/responses']) {
        const r = await call('POST', path, { headers: h, json });
        expect(r.status, `${path} ${JSON.stringify(json)}`).to.equal(status);
        expect(r.body.error.code).to.equal(code);
        expect(r.text).not.to.match(/at .*\.js:\d+/);
      }
    }
    const badJson = await call('POST', '/v1/responses', { headers: { ...h, 'content-type': 'application/json' }, raw: '{"model":' });
    expect(badJson.status).to.equal(400);
    expect(badJson.body).to.deep.equal({ error: { code: 'invalid_json', message: badJson.body.error.message, type: 'invalid_request_error', param: null } });
    const text = await call('POST', '/responses', { headers: { ...h, 'content-type': 'text/plain' }, raw: 'hi' });
    expect(text.status).to.equal(415);
    expect(text.body.error.code).to.equal('unsupported_media_type');
    const get = await call('GET', '/v1/responses', { headers: h });
    expect(get.status).to.equal(405);
    expect(get.body.error.code).to.equal('method_not_allowed');
    expect(env().sim.log.entries).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
  });

  it('answers 429 CONCURRENT_REQUEST_LIMIT_EXCEEDED when the lanes are full', async () => {
    const full = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 0 } });
    const r = await call('POST', '/v1/responses', { headers: keyHeader(full.key), json: { model: 'sim-chat', input: 'x' } });
    expect(r.status).to.equal(429);
    expect(r.body.error.code).to.equal('CONCURRENT_REQUEST_LIMIT_EXCEEDED');
    expect(Number(r.headers.get('retry-after'))).to.be.greaterThan(0);
    expect(env().sim.log.entries).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: full.org.id } })).to.equal(0);
    expect(await StoredResponse.count({ where: { orgId: full.org.id } })).to.equal(0);
  });
});

describe('openai client: responses through the gateway', () => {
  let client: OpenAI;
  beforeEach(resetSim);
  before(async () => {
    const o = await buildOrg(env().redis);
    client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });

  for (const model of ['sim-chat', 'sim-claude']) {
    it(`responses.create JSON and streamed, a function tool round trip and a follow-up on ${model}`, async () => {
      const r = await client.responses.create({ model, input: 'sdk hello' });
      expect(r.model).to.equal(model);
      expect(r.output_text).to.include('sdk hello');

      const stream = await client.responses.create({ model, input: 'sdk stream', stream: true });
      let text = '';
      let completed: OpenAI.Responses.Response | undefined;
      for await (const ev of stream) {
        if (ev.type === 'response.output_text.delta') text += ev.delta;
        if (ev.type === 'response.completed') completed = ev.response;
      }
      expect(text).to.include('sdk stream');
      expect(completed?.status).to.equal('completed');

      const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { query: { type: 'string' } } }, strict: false }];
      const helper = client.responses.stream({ model, input: 'use a tool to find owls', tools });
      const final = await helper.finalResponse();
      const call = final.output.find((i) => i.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
      expect(call.name).to.equal('lookup');
      expect(JSON.parse(call.arguments)).to.deep.equal({ query: 'use a tool to find owls' });

      const answer = await client.responses.create({
        model,
        previous_response_id: final.id,
        tools,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: 'owls found: 7' }],
      });
      expect(answer.output_text).to.include('owls found: 7');

      const followUp = await client.responses.create({ model, previous_response_id: answer.id, input: 'thanks' });
      expect(followUp.output_text).to.include('thanks');
      const last = env().sim.log.entries.at(-1)!.body as Sent;
      expect(last.messages.length).to.equal(5); // question, call, result, answer, thanks
    });
  }

  it("raises BadRequestError previous_response_not_found for an unknown previous_response_id, as OpenAI's API does (streamed or not, before any event)", async () => {
    for (const stream of [false, true]) {
      const err = await client.responses.create({ model: 'sim-chat', input: 'x', previous_response_id: 'resp_nope', stream }).then(() => 'answered', (e: unknown) => e);
      expect(err, `stream: ${stream}`).to.be.instanceOf(OpenAI.BadRequestError);
      expect(err).to.include({ status: 400, code: 'previous_response_not_found', param: 'previous_response_id', type: 'invalid_request_error' });
    }
  });
});
