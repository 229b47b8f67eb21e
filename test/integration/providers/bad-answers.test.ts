import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';
import { ScriptedUpstream, chunk, completion, usageChunk, type Reply } from '../../helpers/scripted-upstream';

/** The one usage event of a request (after the outbox drained), or undefined. */
async function billed(r: { headers: Headers }): Promise<{ inputTokens: number; outputTokens: number } | undefined> {
  await usageSettled();
  const rows = await UsageEvent.findAll({ where: { requestId: r.headers.get('x-service-request-id')! } });
  expect(rows.length, 'at most one usage event').to.be.at.most(1);
  return rows[0] && { inputTokens: rows[0].inputTokens!, outputTokens: rows[0].outputTokens! };
}

/** Usage chunks of a streamed chat answer (`choices: []` with a usage). */
const usageChunks = (text: string) =>
  text.split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6))).filter((c) => Array.isArray(c.choices) && c.choices.length === 0 && c.usage);

/** A scripted upstream of `kind` with a model of its own, started for the enclosing describe. */
function scripted(kind: 'openai' | 'anthropic' | 'cohere'): { up: ScriptedUpstream; model: string } {
  const s = {} as { up: ScriptedUpstream; model: string };
  before(async () => {
    s.up = await ScriptedUpstream.start(kind);
    s.model = await s.up.model();
  });
  after(() => s.up.close());
  return s;
}

/** A 200 of `type`: `head`, 80 MiB of `a` (as fast as the gateway reads), then `tail`. */
function bigAnswer(type: string, head: string, tail: string): Reply {
  const piece = Buffer.alloc(1024 * 1024, 'a');
  return {
    kind: 'raw',
    write: (res) => {
      res.writeHead(200, { 'content-type': type });
      res.write(head);
      let n = 0;
      const more = (): void => {
        while (n < 80) {
          n++;
          if (!res.write(piece)) return void res.once('drain', more);
        }
        res.end(tail);
      };
      res.on('error', () => undefined);
      more();
    },
  };
}

describe('providers: token counts an upstream reports badly, tool call arguments that are no text, and answers too large to hold', () => {
  let o: TestOrg;
  before(async () => {
    o = await buildOrg(env().redis);
  });

  describe('OpenAI-compatible upstream', () => {
    const s = scripted('openai');
    let up: ScriptedUpstream;
    let model: string;
    before(() => ({ up, model } = s));
    const chat = (extra: Record<string, unknown> = {}) => call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages: [{ role: 'user', content: 'hello there' }], ...extra } });
    const streamed = (usage: unknown): Reply => ({ kind: 'sse', events: [chunk({ role: 'assistant', content: 'ok' }), chunk({}, 'stop'), usageChunk(usage as never)] });

    it('token counts written as strings are read as the numbers they are: billed 10 in, 5 out, JSON and streamed', async () => {
      const usage = { prompt_tokens: '10', completion_tokens: '5', total_tokens: '15' };
      up.otherwise = () => ({ kind: 'json', body: completion({ content: 'x' }, 'stop', usage as never) });
      const r = await chat();
      expect(r.status, r.text).to.equal(200);
      expect(await billed(r)).to.deep.equal({ inputTokens: 10, outputTokens: 5 });
      up.otherwise = () => streamed(usage);
      const s = await chat({ stream: true, stream_options: { include_usage: true } });
      expect(s.status, s.text).to.equal(200);
      expect(usageChunks(s.text)).to.have.length(1);
      expect(await billed(s)).to.deep.equal({ inputTokens: 10, outputTokens: 5 });
    });

    it('cached and reasoning token counts that are not counts (fractional, negative) do not cost the request its usage event', async () => {
      up.otherwise = () => ({ kind: 'json', body: completion({ content: 'x' }, 'stop', { prompt_tokens: 10, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 2.5 }, completion_tokens_details: { reasoning_tokens: -1 } } as never) });
      const r = await chat();
      expect(r.status, r.text).to.equal(200);
      expect(await billed(r)).to.deep.equal({ inputTokens: 10, outputTokens: 5 });
    });

    for (const [name, usage] of [
      ['negative', { prompt_tokens: -100000, completion_tokens: -5, total_tokens: -100005 }],
      ['fractional', { prompt_tokens: 10.5, completion_tokens: 5.25 }],
      ['beyond any count (1e300)', { prompt_tokens: 1e300, completion_tokens: 5 }],
      ['null', { prompt_tokens: null, completion_tokens: null }],
      ['not numbers', { prompt_tokens: 'NaN', completion_tokens: {} }],
    ] as const) {
      it(`token counts that are ${name} are no report: billed once by the estimate, which the caller gets as its usage (JSON and streamed)`, async () => {
        up.otherwise = () => ({ kind: 'json', body: completion({ content: 'a short answer' }, 'stop', usage as never) });
        const r = await chat();
        expect(r.status, r.text).to.equal(200);
        const b = await billed(r);
        expect(b, 'the delivered answer is billed').to.not.equal(undefined);
        expect(b!.inputTokens).to.be.above(0);
        expect(b!.outputTokens).to.be.above(0);
        expect(r.body.usage.prompt_tokens, 'the caller gets the estimate').to.equal(b!.inputTokens);
        expect(r.body.usage.completion_tokens).to.equal(b!.outputTokens);
        up.otherwise = () => streamed(usage);
        const s = await chat({ stream: true, stream_options: { include_usage: true } });
        expect(s.status, s.text).to.equal(200);
        const chunks = usageChunks(s.text);
        expect(chunks, `one usage chunk: ${s.text}`).to.have.length(1);
        const sb = await billed(s);
        expect(sb, 'the delivered stream is billed').to.not.equal(undefined);
        expect(sb!.inputTokens).to.be.above(0);
        expect(sb!.outputTokens).to.be.above(0);
        expect(chunks[0].usage.prompt_tokens).to.equal(sb!.inputTokens);
        expect(chunks[0].usage.completion_tokens).to.equal(sb!.outputTokens);
      });
    }

    it('tool call arguments sent as a JSON object, not its text, are passed on as their text in every dialect (the messages dialect answered 500)', async () => {
      const call1 = { id: 'call_1', type: 'function', function: { name: 'f', arguments: { city: 'Paris' } } };
      up.otherwise = () => ({ kind: 'json', body: completion({ content: null, tool_calls: [call1] }, 'tool_calls') });
      const c = await chat();
      expect(c.status, c.text).to.equal(200);
      expect(c.body.choices[0].message.tool_calls[0].function.arguments).to.equal('{"city":"Paris"}');
      const m = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' }, json: { model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] } });
      expect(m.status, m.text).to.equal(200);
      expect(m.body.content[0]).to.include({ type: 'tool_use', name: 'f' });
      expect(m.body.content[0].input).to.deep.equal({ city: 'Paris' });
      const r = await call('POST', '/v1/responses', { headers: keyHeader(o.key), json: { model, input: 'hi' } });
      expect(r.status, r.text).to.equal(200);
      expect(r.body.output.find((i: { type: string }) => i.type === 'function_call').arguments).to.equal('{"city":"Paris"}');
      up.otherwise = () => ({ kind: 'sse', events: [chunk({ role: 'assistant' }), chunk({ tool_calls: [{ index: 0, ...call1 }] }), chunk({}, 'tool_calls'), usageChunk()] });
      const s = await chat({ stream: true });
      expect(s.status, s.text).to.equal(200);
      expect(s.text).to.include('"arguments":"{\\"city\\":\\"Paris\\"}"');
      await usageSettled();
    });

    it('content sent as content parts ([{type: "text", text}]) is answered as its text in every dialect, JSON and streamed (the messages dialect wrote "[object Object]")', async () => {
      const parts = [{ type: 'text', text: 'Hello ' }, { type: 'text', text: 'world' }];
      up.otherwise = () => ({ kind: 'json', body: completion({ content: parts as never }, 'stop') });
      const c = await chat();
      expect(c.status, c.text).to.equal(200);
      expect(c.body.choices[0].message.content).to.equal('Hello world');
      const m = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' }, json: { model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] } });
      expect(m.status, m.text).to.equal(200);
      expect(m.body.content).to.deep.equal([{ type: 'text', text: 'Hello world' }]);
      const r = await call('POST', '/v1/responses', { headers: keyHeader(o.key), json: { model, input: 'hi' } });
      expect(r.status, r.text).to.equal(200);
      expect(r.body.output.find((i: { type: string }) => i.type === 'message').content[0].text).to.equal('Hello world');
      up.otherwise = () => ({ kind: 'sse', events: [chunk({ role: 'assistant', content: [{ type: 'text', text: 'Hello ' }] }), chunk({ content: [{ type: 'text', text: 'world' }] }), chunk({}, 'stop'), usageChunk()] });
      const s = await chat({ stream: true });
      expect(s.status, s.text).to.equal(200);
      const deltas = s.text.split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6))).flatMap((x) => x.choices ?? []).map((ch: { delta?: { content?: unknown } }) => ch.delta?.content).filter((x: unknown) => x !== undefined && x !== null);
      expect(deltas.join('')).to.equal('Hello world');
      expect(deltas.every((d: unknown) => typeof d === 'string')).to.equal(true);
      const ms = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' }, json: { model, max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] } });
      expect(ms.status, ms.text).to.equal(200);
      expect(ms.text).to.not.include('[object Object]');
      expect(ms.text).to.include('"text":"Hello "');
      await usageSettled();
    });

    it('embeddings: a prompt_tokens that is no count (1e300, negative, a fraction) bills the gateway\'s own count; digits in a string are read', async () => {
      const embedModel = await up.model({ capabilities: { embeddings: true }, prices: { input_token: 1 } });
      const cases: Array<[unknown, (n: number) => boolean]> = [
        [1e300, (n) => n > 0 && n < 100],
        [-100, (n) => n > 0 && n < 100],
        [2.5, (n) => n > 0 && n < 100],
        ['7', (n) => n === 7],
      ];
      for (const [reported, ok] of cases) {
        up.otherwise = () => ({ kind: 'json', body: { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], model: 'up-model', usage: { prompt_tokens: reported, total_tokens: reported } } });
        const r = await call('POST', '/v1/embeddings', { headers: keyHeader(o.key), json: { model: embedModel, input: 'hello there' } });
        expect(r.status, r.text).to.equal(200);
        const b = await billed(r);
        expect(b, `reported ${String(reported)}`).to.not.equal(undefined);
        expect(ok(b!.inputTokens), `reported ${String(reported)}: billed ${b!.inputTokens}`).to.equal(true);
      }
    });

    it('an answer larger than UPSTREAM_MAX_RESPONSE_BYTES (80 MB, chunked) is 502 upstream_error, nothing billed, and the worker serves on', async function () {
      this.timeout(60_000);
      up.otherwise = () => bigAnswer('application/json', '{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"', '"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}');
      const r = await chat();
      expect(r.status, r.text.slice(0, 300)).to.equal(502);
      expect(r.body.error.code).to.equal('upstream_error');
      expect(await billed(r)).to.equal(undefined);
      // announced by its Content-Length: refused at its headers, before a byte of it is read
      up.otherwise = () => ({ kind: 'raw', write: (res) => res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(100 * 1024 * 1024) }).write('{"id":') });
      const h = await chat();
      expect(h.status, h.text.slice(0, 300)).to.equal(502);
      expect(h.body.error.code).to.equal('upstream_error');
      expect(await billed(h)).to.equal(undefined);
      up.otherwise = () => ({ kind: 'json', body: completion({ content: 'ok' }, 'stop') });
      const ok = await chat();
      expect(ok.status, ok.text).to.equal(200);
    });

    it('a stream that goes on past UPSTREAM_MAX_RESPONSE_BYTES in one event that never ends is cut with an error, nothing billed', async function () {
      this.timeout(60_000);
      up.otherwise = () => bigAnswer('text/event-stream', `data: ${JSON.stringify(chunk({ role: 'assistant', content: 'ok' }))}\n\ndata: {"x":"`, '"}\n\ndata: [DONE]\n\n');
      const s = await chat({ stream: true });
      expect(s.status).to.equal(200);
      expect(s.text).to.include('"upstream_error"');
      expect(s.text).to.not.include('[DONE]');
      expect(await billed(s)).to.equal(undefined);
    });
  });

  describe('Anthropic upstream (native and translated)', () => {
    const s = scripted('anthropic');
    let up: ScriptedUpstream;
    let model: string;
    before(() => ({ up, model } = s));
    const message = (usage: unknown) => ({ id: 'msg_s', type: 'message', role: 'assistant', model: 'up-model', content: [{ type: 'text', text: 'x' }], stop_reason: 'end_turn', stop_sequence: null, usage });
    const headers = () => ({ ...keyHeader(o.key), 'anthropic-version': '2023-06-01' });

    it('token counts written as strings are billed as their numbers, never concatenated; negative ones are not billed as credit', async () => {
      up.otherwise = () => ({ kind: 'json', body: message({ input_tokens: '10', output_tokens: '5', cache_read_input_tokens: '2' }) });
      const n = await call('POST', '/v1/messages', { headers: headers(), json: { model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] } });
      expect(n.status, n.text).to.equal(200);
      expect(await billed(n)).to.deep.equal({ inputTokens: 12, outputTokens: 5 });
      const t = await call('POST', '/v1/chat/completions', { headers: headers(), json: { model, messages: [{ role: 'user', content: 'hi' }] } });
      expect(t.status, t.text).to.equal(200);
      expect(await billed(t)).to.deep.equal({ inputTokens: 12, outputTokens: 5 });
      expect(t.body.usage.prompt_tokens).to.equal(12);
      up.otherwise = () => ({ kind: 'json', body: message({ input_tokens: -1000, output_tokens: -5 }) });
      const neg = await call('POST', '/v1/messages', { headers: headers(), json: { model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] } });
      expect(neg.status, neg.text).to.equal(200);
      const b = await billed(neg);
      expect(b!.inputTokens).to.be.at.least(0);
      expect(b!.outputTokens).to.be.at.least(0);
    });
  });

  describe('Cohere upstream (rerank)', () => {
    const s = scripted('cohere');
    const answer = (searchUnits: unknown): Reply => ({ kind: 'json', body: { id: 'r', results: [{ index: 1, relevance_score: 0.9 }, { index: 0, relevance_score: 0.1 }], meta: { billed_units: { search_units: searchUnits } } } });

    it('search units that are no count (1e300, 2^60, negative, a fraction) bill the gateway\'s own count; digits in a string are read', async () => {
      const model = await s.up.model({ capabilities: { rerank: true }, prices: { search_unit: 1000 } });
      const cases: Array<[unknown, number]> = [[1e300, 1], [2 ** 60, 1], [-3, 1], [2.5, 1], [0, 1], ['4', 4], [2, 2]];
      for (const [reported, units] of cases) {
        s.up.otherwise = () => answer(reported);
        const r = await call('POST', '/v1/rerank', { headers: keyHeader(o.key), json: { model, query: 'q', documents: ['a', 'b'] } });
        expect(r.status, r.text).to.equal(200);
        expect(r.body.meta.billed_units, `reported ${String(reported)}`).to.deep.equal({ search_units: units });
        await usageSettled();
        const ev = await UsageEvent.findOne({ where: { requestId: r.headers.get('x-service-request-id')! } });
        expect(ev!.units, `reported ${String(reported)}`).to.deep.equal({ search_units: units, cost_micros: units * 1000 });
      }
    });
  });
});
