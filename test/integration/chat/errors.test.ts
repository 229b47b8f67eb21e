import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { parseSse } from '../../helpers/sse-events';
import { UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';
import { leasesFreed } from '../../helpers/leases';

const msgs = [{ role: 'user', content: 'error path' }];

/** Counts the org's usage events once the outbox is drained. */
async function billed(orgId: string): Promise<number> {
  await usageSettled();
  return UsageEvent.count({ where: { orgId } });
}

function expectError(r: Reply, status: number, code: string, what = '') {
  expect(r.status, `${what} ${r.text}`).to.equal(status);
  // the spec's envelope plus OpenAI's type and param (test/integration/conformance checks their values)
  expect(r.body, what).to.deep.equal({ error: { code, message: r.body.error.message, type: r.body.error.type, param: r.body.error.param } });
  expect(r.body.error.type, what).to.be.a('string');
  expect(r.body.error.message).to.be.a('string').and.not.equal('');
  expect(r.text, 'no stack trace').not.to.match(/at .*\.[jt]s:\d+/);
  expect(r.headers.get('x-service-request-id')).to.match(/^req_/);
}

describe('chat completions and legacy completions: every refusal has its status and code and bills nothing', () => {
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
  });

  it("refuses out-of-range and mistyped fields with 400 in OpenAI's codes (invalid_request for a body without a model) before any upstream call", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ model: 'sim-chat', messages: msgs, temperature: 2.5 }, 'decimal_above_max_value'],
      [{ model: 'sim-chat', messages: msgs, temperature: -1 }, 'decimal_below_min_value'],
      [{ model: 'sim-chat', messages: msgs, top_p: 1.5 }, 'decimal_above_max_value'],
      [{ model: 'sim-chat', messages: msgs, n: 0 }, 'integer_below_min_value'],
      [{ model: 'sim-chat', messages: msgs, n: 129 }, 'integer_above_max_value'],
      [{ model: 'sim-chat', messages: msgs, max_tokens: 0 }, 'integer_below_min_value'],
      [{ model: 'sim-chat', messages: msgs, max_tokens: 1.5 }, 'invalid_type'],
      [{ model: 'sim-chat', messages: msgs, max_completion_tokens: -3 }, 'integer_below_min_value'],
      [{ model: 'sim-chat', messages: msgs, stream: 'yes' }, 'invalid_type'],
      [{ model: 'sim-chat', messages: msgs, stream_options: 'usage' }, 'invalid_type'],
      [{ model: 'sim-chat', messages: 'hello' }, 'invalid_type'],
      [{ model: 'sim-chat', messages: [{ role: 'user', content: 42 }] }, 'invalid_type'],
      [{ model: '', messages: msgs }, 'invalid_request'],
      [{ model: 7, messages: msgs }, 'invalid_type'],
      [{ model: 'sim-chat', messages: msgs, tools: [{ function: { name: 'no type' } }] }, 'missing_required_parameter'],
    ];
    const before = await billed(o.org.id);
    for (const [json, code] of cases) expectError(await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json }), 400, code, JSON.stringify(json));
    // a turn without its role: OpenAI's own code (openai-message-rules.test.ts)
    const noRole = { model: 'sim-chat', messages: [{ content: 'no role' }] };
    expectError(await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: noRole }), 400, 'missing_required_parameter', JSON.stringify(noRole));
    // JSON that is not an object is an invalid request (invalid_json is for text that is not JSON)
    for (const [raw, code] of [['[]', 'invalid_request'], ['"a string"', 'invalid_request'], ['null', 'invalid_request'], ['42', 'invalid_request']]) {
      expectError(await call('POST', '/v1/chat/completions', { headers: { ...keyHeader(o.key), 'content-type': 'application/json' }, raw }), 400, code, raw);
    }
    expect(env().sim.log.entries).to.have.length(0);
    expect(await billed(o.org.id)).to.equal(before);
  });

  it("refuses a tools entry OpenAI's document refuses (a function tool without its function, a name outside a-z A-Z 0-9 _ - or over 64, parameters not an object, a custom tool without its custom), naming it, on every upstream kind", async () => {
    const fn = (f: unknown) => [{ type: 'function', function: f }];
    // OpenAI's codes for a missing field, a wrong type, a name outside its pattern or over 64
    const cases: Array<[unknown, string, string]> = [
      [[{ type: 'function' }], 'tools[0].function', 'missing_required_parameter'],
      [fn(null), 'tools[0].function', 'invalid_type'],
      [fn({ description: 'no name' }), 'tools[0].function.name', 'missing_required_parameter'],
      [fn({ name: 'get weather' }), 'tools[0].function.name', 'invalid_value'],
      [fn({ name: 'x'.repeat(65) }), 'tools[0].function.name', 'string_above_max_length'],
      [fn({ name: 'f', parameters: 'object' }), 'tools[0].function.parameters', 'invalid_type'],
      [fn({ name: 'f', strict: 'yes' }), 'tools[0].function.strict', 'invalid_type'],
      [[{ type: 'function', function: { name: 'ok' } }, { type: 'custom' }], 'tools[1].custom', 'missing_required_parameter'],
    ];
    const before = await billed(o.org.id);
    for (const model of ['sim-chat', 'sim-claude']) {
      for (const [tools, param, code] of cases) {
        const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages: msgs, tools } });
        expectError(r, 400, code, `${model} ${JSON.stringify(tools)}`);
        expect(r.body.error.param, JSON.stringify(tools)).to.equal(param);
      }
    }
    // a name outside OpenAI's pattern in its words (its answer to a probe of tools[0].function.name)
    const named = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', messages: msgs, tools: fn({ name: 'cart.add' }) } });
    expect(named.body.error.message).to.equal("Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.");
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billed(o.org.id)).to.equal(before);
    // the longest name, and a tool type the gateway forwards as sent, still answer
    const ok = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', messages: msgs, tools: fn({ name: `a-${'b_'.repeat(31)}`, strict: null, parameters: { type: 'object', properties: {} } }) } });
    expect(ok.status, ok.text).to.equal(200);
  });

  it("refuses malformed turns and choices OpenAI's document refuses, naming them, on every upstream kind (a translating one answered 502 to a tool call without its function)", async () => {
    const user = { role: 'user', content: 'x' };
    // OpenAI's codes for a missing field, a wrong type, a value it does not take
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ messages: [{ role: 'assistant', tool_calls: [null] }, user] }, 'messages[0].tool_calls[0]', 'invalid_type'],
      [{ messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function' }] }, { role: 'tool', tool_call_id: 'c', content: 'r' }] }, 'messages[0].tool_calls[0].function', 'missing_required_parameter'],
      [{ messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: {} } }] }, user] }, 'messages[0].tool_calls[0].function.arguments', 'invalid_type'],
      [{ messages: [{ role: 'tool', content: 'r' }] }, 'messages[0].tool_call_id', 'missing_required_parameter'],
      [{ messages: [{ role: 'user', content: [{ type: 'text' }] }] }, 'messages[0].content[0].text', 'missing_required_parameter'],
      [{ messages: [{ role: 'user', content: [null] }] }, 'messages[0].content[0]', 'invalid_type'],
      [{ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: 'data:x' }] }] }, 'messages[0].content[0].image_url', 'invalid_type'],
      [{ tool_choice: 'sometimes' }, 'tool_choice', 'invalid_value'],
      [{ tool_choice: { type: 'function' } }, 'tool_choice.function', 'missing_required_parameter'],
      [{ response_format: { type: 'json_schema' } }, 'response_format.json_schema', 'missing_required_parameter'],
      // a json_schema format's name in OpenAI's codes (its words checked below)
      [{ response_format: { type: 'json_schema', json_schema: { name: 'my schema' } } }, 'response_format.json_schema.name', 'invalid_value'],
      [{ response_format: { type: 'json_schema', json_schema: { name: 'x'.repeat(65) } } }, 'response_format.json_schema.name', 'string_above_max_length'],
      [{ response_format: 'json' }, 'response_format', 'invalid_type'],
      [{ stop: 5 }, 'stop', 'invalid_type'],
      [{ parallel_tool_calls: 'yes' }, 'parallel_tool_calls', 'invalid_type'],
    ];
    const before = await billed(o.org.id);
    for (const model of ['sim-chat', 'sim-claude']) {
      for (const [extra, param, code] of cases) {
        const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages: msgs, ...extra } });
        expectError(r, 400, code, `${model} ${JSON.stringify(extra)}`);
        expect(r.body.error.param, `${model} ${JSON.stringify(extra)}`).to.equal(param);
      }
    }
    // a json_schema format's name outside OpenAI's pattern, or over 64, in its words
    const named = async (name: string) => (await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', messages: msgs, response_format: { type: 'json_schema', json_schema: { name, schema: { type: 'object' } } } } })).body.error.message;
    expect(await named('answer.v4')).to.equal("Invalid 'response_format.json_schema.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.");
    expect(await named('x'.repeat(65))).to.equal("Invalid 'response_format.json_schema.name': string too long. Expected a string with maximum length 64, but got a string with length 65 instead.");
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billed(o.org.id)).to.equal(before);
  });

  it('legacy completions: refuses a missing or mistyped prompt, an unknown and a non-chat model, bad JSON, a wrong method', async () => {
    const cases: Array<[unknown, number, string]> = [
      [{ model: 'sim-chat' }, 400, 'missing_required_parameter'],
      [{ model: 'sim-chat', prompt: 42 }, 400, 'invalid_type'],
      [{ model: 'sim-chat', prompt: [] }, 400, 'invalid_request'],
      [{ prompt: 'x' }, 400, 'invalid_request'],
      [{ model: 'sim-chat', prompt: 'x', max_tokens: -1 }, 400, 'integer_below_min_value'],
      [{ model: 'sim-chat', prompt: 'x', temperature: 9 }, 400, 'decimal_above_max_value'],
      // OpenAI's CreateCompletionRequest ranges and types
      [{ model: 'sim-chat', prompt: 'x', best_of: 21 }, 400, 'integer_above_max_value'],
      [{ model: 'sim-chat', prompt: 'x', best_of: 1e9 }, 400, 'integer_above_max_value'],
      [{ model: 'sim-chat', prompt: 'x', best_of: 1.5 }, 400, 'invalid_type'],
      [{ model: 'sim-chat', prompt: 'x', logprobs: 6 }, 400, 'integer_above_max_value'],
      [{ model: 'sim-chat', prompt: 'x', logprobs: true }, 400, 'invalid_type'],
      [{ model: 'sim-chat', prompt: 'x', echo: 'yes' }, 400, 'invalid_type'],
      [{ model: 'sim-chat', prompt: 'x', suffix: 5 }, 400, 'invalid_type'],
      [{ model: 'nope', prompt: 'x' }, 404, 'model_not_found'],
      [{ model: 'sim-embed', prompt: 'x' }, 400, 'model_not_chat_capable'],
      [{ model: 'sim-decide', prompt: 'x' }, 400, 'model_not_chat_capable'],
    ];
    const before = await billed(o.org.id);
    for (const [json, status, code] of cases) expectError(await call('POST', '/v1/completions', { headers: keyHeader(o.key), json }), status, code, JSON.stringify(json));
    for (const [field, value] of [['best_of', 21], ['logprobs', 6], ['echo', 'yes'], ['suffix', 5]] as const) {
      const r = await call('POST', '/v1/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', prompt: 'x', [field]: value } });
      expect(r.body.error.param, field).to.equal(field);
    }
    expectError(await call('POST', '/v1/completions', { headers: { ...keyHeader(o.key), 'content-type': 'application/json' }, raw: '{"prompt"' }), 400, 'invalid_json');
    expectError(await call('POST', '/v1/completions', { headers: { ...keyHeader(o.key), 'content-type': 'text/plain' }, raw: 'x' }), 415, 'unsupported_media_type');
    const get = await call('GET', '/v1/completions', { headers: keyHeader(o.key) });
    expectError(get, 405, 'method_not_allowed');
    expect(get.headers.get('allow')).to.equal('POST');
    expect(env().sim.log.entries).to.have.length(0);
    expect(await billed(o.org.id)).to.equal(before);
  });

  it('legacy completions stream with the public id, end with [DONE] and record one usage event', async () => {
    const res = await fetch(`${env().gw.url}/v1/completions`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', prompt: 'stream legacy', stream: true }),
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
    const requestId = res.headers.get('x-service-request-id')!;
    const events = parseSse(await res.text());
    expect(events.at(-1)!.data).to.equal('[DONE]');
    const chunks = events.slice(0, -1).map((e) => e.data);
    expect(chunks.length).to.be.greaterThan(1);
    expect(chunks.every((c) => c.model === 'sim-chat' && c.object === 'text_completion')).to.equal(true);
    expect(chunks.map((c) => c.choices[0]?.text ?? '').join('')).to.include('stream legacy');
    expect(env().sim.log.entries[0]).to.include({ path: '/v1/completions', model: 'sim-chat-1' });
    await usageSettled();
    const usage = await UsageEvent.findAll({ where: { requestId } });
    expect(usage).to.have.length(1);
    expect(usage[0]).to.include({ orgId: o.org.id, model: 'sim-chat', modality: 'chat', lane: 'interactive', passthrough: false });
    expect(usage[0].outputTokens).to.be.greaterThan(0);
  });

  it('answers 429 CONCURRENT_REQUEST_LIMIT_EXCEEDED as JSON (not a stream) to a streaming request at the lane count', async () => {
    const full = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 0 } });
    for (const [path, json] of [
      ['/v1/chat/completions', { model: 'sim-chat', messages: msgs, stream: true }],
      ['/v1/completions', { model: 'sim-chat', prompt: 'x', stream: true }],
      ['/v1/completions', { model: 'sim-chat', prompt: 'x' }],
    ] as const) {
      const r = await call('POST', path, { headers: keyHeader(full.key), json });
      expectError(r, 429, 'CONCURRENT_REQUEST_LIMIT_EXCEEDED', path);
      expect(r.headers.get('content-type')).to.match(/^application\/json/);
      expect(Number(r.headers.get('retry-after'))).to.be.at.least(1);
    }
    expect(env().sim.log.entries).to.have.length(0);
    expect(await billed(full.org.id)).to.equal(0);
  });

  describe('upstream refusals map to their codes, are not retried when not retryable, and bill nothing', () => {
    const cases: Array<{ status: number; expectStatus: number; code: string; attempts: number; retryAfter?: boolean }> = [
      { status: 400, expectStatus: 400, code: 'upstream_invalid_request', attempts: 1 },
      { status: 404, expectStatus: 400, code: 'upstream_invalid_request', attempts: 1 },
      { status: 422, expectStatus: 400, code: 'upstream_invalid_request', attempts: 1 },
      // the platform's credential refused: not the caller's fault, so a 502 (passthrough keeps 401/403, below)
      { status: 401, expectStatus: 502, code: 'upstream_auth_failed', attempts: 1 },
      { status: 403, expectStatus: 502, code: 'upstream_auth_failed', attempts: 1 },
      { status: 500, expectStatus: 502, code: 'upstream_error', attempts: 3 }, // a 5xx is retryable (docs/routing.md)
      { status: 502, expectStatus: 502, code: 'upstream_error', attempts: 3 },
      { status: 503, expectStatus: 503, code: 'upstream_unavailable', attempts: 3, retryAfter: true },
    ];
    for (const c of cases) {
      it(`upstream ${c.status} → ${c.expectStatus} ${c.code} after ${c.attempts} attempt(s), on chat and legacy completions, JSON and streamed`, async () => {
        env().sim.knobs.set('sim-chat-1', { status: c.status, retryAfter: 0 });
        const before = await billed(o.org.id);
        let expectedAttempts = 0;
        for (const [path, json] of [
          ['/v1/chat/completions', { model: 'sim-chat', messages: msgs }],
          ['/v1/chat/completions', { model: 'sim-chat', messages: msgs, stream: true }],
          ['/v1/completions', { model: 'sim-chat', prompt: 'x' }],
        ] as const) {
          const r = await call('POST', path, { headers: keyHeader(o.key), json });
          expectError(r, c.expectStatus, c.code, `${path} ${JSON.stringify(json)}`);
          if (c.status === 400) expect(r.body.error.message, 'the upstream message is included').to.include(`simulated status ${c.status}`);
          if (c.retryAfter) expect(Number(r.headers.get('retry-after'))).to.be.at.least(1);
          expectedAttempts += c.attempts;
          expect(env().sim.log.entries, `${path}: upstream attempts`).to.have.length(expectedAttempts);
        }
        expect(await billed(o.org.id)).to.equal(before);
        expect(await leasesFreed(env().gw.ctx.leases, o.org.id, 'chat', 'interactive'), 'lease released').to.equal(true);
      });
    }

    it('a passthrough key the upstream refuses keeps its 401/403 (the caller can fix it), with the upstream message', async () => {
      const before = await billed(o.org.id);
      for (const status of [401, 403]) {
        env().sim.knobs.set('sim-chat-1', { status, retryAfter: 0 });
        for (const stream of [false, true]) {
          const r = await call('POST', '/v1/chat/completions', { headers: { ...keyHeader(o.key), authorization: 'Bearer sk-callers-own-bad-key' }, json: { model: 'sim-chat', messages: msgs, stream } });
          expectError(r, status, 'upstream_auth_failed', `passthrough ${status} stream=${stream}`);
          expect(r.body.error.message).to.include(`simulated status ${status}`);
        }
        // the same refusal of the platform's credential is a 502 and does not pass the upstream's words on
        const platform = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', messages: msgs } });
        expectError(platform, 502, 'upstream_auth_failed', `platform ${status}`);
        expect(platform.body.error.message).not.to.include('simulated status');
      }
      expect(await billed(o.org.id)).to.equal(before);
    });
  });
});

