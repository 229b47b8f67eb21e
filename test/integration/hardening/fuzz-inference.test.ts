import crypto from 'crypto';
import fc from 'fast-check';
import { expect } from 'chai';
import { Op } from 'sequelize';
import { env } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { rawRequest, type RawReply } from '../../helpers/raw-http';
import { FUZZ_PARAMS, fuzzTimeout, encodedBodies, fuzzHeaders, jsonBodies, multipartBodies, nastyString, problemOf } from '../../helpers/fuzz';
import { pngOf } from '../../helpers/images';
import { makeWav, SPEECH_LIKE } from '../../helpers/wav';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';

const msgs = [{ role: 'user', content: 'hi' }];
/** Every JSON inference route with a valid body the fuzzer mutates. */
const JSON_ROUTES: Array<{ path: string; body: unknown; headers?: Record<string, string> }> = [
  { path: '/v1/chat/completions', body: { model: 'sim-chat', messages: msgs, max_tokens: 4 } },
  { path: '/v1/completions', body: { model: 'sim-chat', prompt: 'hi', max_tokens: 4 } },
  { path: '/v1/messages', body: { model: 'sim-claude', max_tokens: 4, messages: msgs }, headers: { 'anthropic-version': '2023-06-01' } },
  { path: '/v1/messages', body: { model: 'sim-chat', max_tokens: 4, messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'x', input: {} }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'r' }] }], context_management: { edits: [{ type: 'clear_tool_uses_20250919', trigger: { type: 'tool_uses', value: 0 }, keep: { type: 'tool_uses', value: 0 } }] } }, headers: { 'anthropic-version': '2023-06-01' } },
  { path: '/v1/messages/count_tokens', body: { model: 'sim-claude', messages: msgs }, headers: { 'anthropic-version': '2023-06-01' } },
  { path: '/v1/responses', body: { model: 'sim-chat', input: 'hi', max_output_tokens: 16 } },
  { path: '/v1/embeddings', body: { model: 'sim-embed', input: ['hi', 'there'] } },
  { path: '/v1/rerank', body: { model: 'sim-rerank', query: 'q', documents: ['a', 'b'] } },
  { path: '/v2/rerank', body: { model: 'sim-rerank', query: 'q', documents: [{ text: 'a' }] } },
  { path: '/v1/images/generations', body: { model: 'sim-image', prompt: 'p', size: '256x256', n: 1 } },
  { path: '/v2/embed', body: { model: 'sim-embed', input_type: 'search_document', texts: ['hi'], embedding_types: ['float', 'ubinary'] } },
  { path: '/v1/embed', body: { model: 'sim-embed', texts: ['hi'] } },
  { path: '/v2/chat', body: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 } },
  { path: '/v1/chat', body: { model: 'sim-chat', message: 'hi', chat_history: [{ role: 'USER', message: 'a' }, { role: 'CHATBOT', message: 'b', tool_calls: [{ name: 't', parameters: { q: 1 } }] }], tool_results: [{ call: { name: 't', parameters: { q: 1 } }, outputs: [{ r: 2 }] }], max_tokens: 4 } },
  { path: '/v1/responses', body: { model: 'sim-chat', input: [{ role: 'user', content: 'hi' }, { type: 'compaction_trigger' }], context_management: [{ type: 'compaction', compact_threshold: 1000 }], max_output_tokens: 16 } },
  { path: '/v1/conversations', body: { metadata: { k: 'v' }, items: [{ type: 'message', role: 'user', content: 'hi' }] } },
  { path: '/v1/responses/compact', body: { model: 'sim-chat', input: 'hi' } },
  // nested content, so that the mutations reach the values inside items and blocks (a null part, a block without its text)
  { path: '/v1/chat/completions', body: { model: 'sim-chat', max_tokens: 4, tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }], messages: [{ role: 'system', content: [{ type: 'text', text: 's' }] }, { role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } }] }, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }] }, { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'r' }] }] } },
  { path: '/v1/messages', body: { model: 'sim-claude', max_tokens: 4, system: [{ type: 'text', text: 's' }], tools: [{ name: 'lookup', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }], messages: [{ role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }, { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'doc' }] } }] }, { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'lookup', input: { q: 'x' } }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'r' }] }] }] }, headers: { 'anthropic-version': '2023-06-01' } },
  { path: '/v1/responses', body: { model: 'sim-chat', max_output_tokens: 16, tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } }], text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object', properties: { a: { type: 'string' } } } } }, input: [{ role: 'user', content: [{ type: 'input_text', text: 'see' }, { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' }] }, { type: 'function_call', call_id: 'c1', name: 'lookup', arguments: '{"q":"x"}' }, { type: 'function_call_output', call_id: 'c1', output: 'r' }, { role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] }] } },
  { path: '/v1/systemone', body: { model: 'sim-decide', state: 'paid in full', questions: { paid: { type: 'noul', instructions: 'Paid?', criteria: { true: 'paid', false: 'unpaid' } } } } },
];

let ipSeq = 0;
/** Fuzzed keys must not trip the failed-auth limit of other tests: an address per request. */
const freshIp = () => (++ipSeq, `10.${(ipSeq >> 16) & 255}.${(ipSeq >> 8) & 255}.${ipSeq & 255}`);

describe('fuzzing the inference API through the running app (fast-check)', function () {
  this.timeout(fuzzTimeout(120_000));
  let o: TestOrg;
  const refused: string[] = [];
  const findings: string[] = [];
  /** Statuses seen per JSON route: the fuzzer must reach both validation (4xx) and real answers (2xx). */
  const seen = new Map<string, Set<number>>();

  /** One fuzzed request; the answer must hold every property, and a refused one's id is kept for the billing check. */
  async function send(method: string, path: string, headers: Record<string, string>, body?: string | Buffer): Promise<RawReply> {
    const r = await rawRequest(env().gw.url, method, path, { headers: { 'x-forwarded-for': freshIp(), ...headers }, body });
    const problem = problemOf(r, method) ?? (r.text.includes(o.key) ? 'the API key echoed' : undefined);
    if (problem) findings.push(`${method} ${path} ${JSON.stringify(headers).slice(0, 200)} body=${JSON.stringify(String(body ?? '').slice(0, 300))} → ${r.status}: ${problem} ${r.text.slice(0, 200)}`);
    const id = r.headers['x-service-request-id'];
    if (r.status >= 400 && typeof id === 'string') refused.push(id);
    return r;
  }

  /** The credential: mostly the org's key (so bodies reach validation), else none, junk, or a key in the path. */
  const credential = fc.oneof(
    { weight: 8, arbitrary: fc.constant<'key' | 'none' | 'junk' | 'path'>('key') },
    { weight: 1, arbitrary: fc.constantFrom<'key' | 'none' | 'junk' | 'path'>('none', 'junk', 'path') },
  );
  const withCredential = (cred: 'key' | 'none' | 'junk' | 'path', path: string, headers: Record<string, string>) => {
    if (cred === 'key') return { path, headers: { ...headers, 'SERVICE-API-KEY': o.key } };
    if (cred === 'junk') return { path, headers: { ...headers, 'SERVICE-API-KEY': `svc_${crypto.randomBytes(6).toString('hex')}` } };
    if (cred === 'path') return { path: path.includes('KEY') ? path.replace('KEY', o.key) : `/a/${o.key}${path}`, headers };
    return { path, headers };
  };

  before(async () => {
    o = await buildOrg(env().redis);
  });

  for (const route of JSON_ROUTES) {
    it(`POST ${route.path}: malformed bodies and headers never get a 5xx or a bare error`, async () => {
      await fc.assert(
        fc.asyncProperty(jsonBodies(route.body), fuzzHeaders, credential, async (body, headers, cred) => {
          const req = withCredential(cred, route.path, { 'content-type': 'application/json', ...route.headers, ...headers });
          const r = await send('POST', req.path, req.headers, body);
          seen.set(route.path, (seen.get(route.path) ?? new Set()).add(r.status));
          return r.status < 500;
        }),
        FUZZ_PARAMS(70),
      );
      const statuses = [...(seen.get(route.path) ?? [])];
      expect(statuses.some((s) => s === 400 || s === 422), `validation reached: ${statuses}`).to.equal(true);
    });
  }

  it('content encodings: gzip / deflate / br bodies whole, truncated or corrupted, garbage, unknown codings: never a 5xx', async () => {
    const arb = fc.constantFrom(...JSON_ROUTES).chain((route) => fc.tuple(fc.constant(route), encodedBodies(route.body)));
    const codes = new Set<string>();
    await fc.assert(
      fc.asyncProperty(arb, async ([route, { body, encoding }]) => {
        const r = await send('POST', route.path, { 'content-type': 'application/json', 'content-encoding': encoding, 'SERVICE-API-KEY': o.key, ...route.headers }, body);
        codes.add(r.status < 400 ? 'ok' : String(r.body?.error?.code));
        return r.status < 500;
      }),
      FUZZ_PARAMS(150),
    );
    if (process.env.FUZZ_DEBUG) process.stdout.write(`      encodings: ${[...codes].join(' ')}\n`);
    expect([...codes], 'undecodable bodies refused as such').to.include('invalid_content_encoding');
  });

  it('multipart routes (transcriptions, image edits, uploads): broken parts, names and files', async () => {
    const wav = makeWav(SPEECH_LIKE);
    const png = await pngOf(16, 16);
    const routes: Array<[string, string[], string, Buffer]> = [
      ['/v1/audio/transcriptions', ['model', 'language', 'prompt', 'temperature', 'response_format', 'timestamp_granularities[]'], 'file', wav],
      ['/v1/images/edits', ['model', 'prompt', 'size', 'n', 'response_format'], 'image', png],
      ['/v1/images/uploads', ['purpose'], 'file', png],
    ];
    for (const [path, fields, fileField, file] of routes) {
      await fc.assert(
        fc.asyncProperty(multipartBodies(fields, fileField, file), credential, async (m, cred) => {
          const req = withCredential(cred, path, { 'content-type': m.contentType });
          const r = await send('POST', req.path, req.headers, m.body);
          return r.status < 500;
        }),
        FUZZ_PARAMS(50),
      );
    }
  });

  it('paths and methods: any spelling under every prefix answers a JSON 404/405 or a real answer, never a 5xx', async () => {
    const known = [...JSON_ROUTES.map((r) => r.path), '/v1/models', '/v1/models/sim-chat', '/v1/images/img_x', '/v1/images/img_x/content', '/v1/images/img_x/bytes', '/v1/responses/resp_x', '/v1/responses/resp_x/cancel', '/v1/conversations/conv_x', '/v1/conversations/conv_x/items', '/v1/conversations/conv_x/items/msg_x', '/v1/chat/completions/chatcmpl_x', '/v1/embeddings/models', '/v1/rerank/models', '/v1/images/models', '/v1/audio/transcriptions/models', '/healthz'];
    const encode = (s: string) => {
      try {
        return encodeURIComponent(s);
      } catch {
        return '%ED%A0%80'; // a lone surrogate, as its UTF-8 bytes
      }
    };
    const segment = fc.oneof(nastyString.map(encode), fc.constantFrom('..', '.', '%2e%2e', '%2F', '%00', '%ff', '%', '%zz', ';', 'V1', 'CHAT'));
    const path = fc.oneof(
      fc.tuple(fc.constantFrom(...known), fc.array(segment, { maxLength: 3 })).map(([p, extra]) => [p, ...extra].join('/')),
      fc.tuple(fc.constantFrom(...known), fc.constantFrom('/', '//', '?a=%', '?stream=true&stream=false', '%20', '.json', '#x')).map(([p, s]) => p + s),
      fc.constantFrom(...known).map((p) => p.toUpperCase()),
      fc.tuple(fc.constantFrom('/A/', '/a/', '/R/'), fc.constantFrom(...known)).map(([pre, p]) => `${pre}KEY${p}`),
      fc.tuple(fc.constantFrom('/a/', '/a/x/p/', '/r/', '/r/00000000-0000-4000-8000-000000000000'), segment, fc.constantFrom(...known)).map(([pre, s, p]) => `${pre}${s}${p}`),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'), path, credential, async (method, p, cred) => {
        const req = withCredential(cred, p, { 'content-type': 'application/json' });
        const r = await send(method, req.path, req.headers, method === 'GET' || method === 'HEAD' ? undefined : '{}');
        return r.status < 500;
      }),
      FUZZ_PARAMS(250),
    );
  });

  it('no finding, nothing billed for a refused request, and the app still serves', async () => {
    if (process.env.FUZZ_DEBUG) for (const [p, st] of seen) process.stdout.write(`      ${p}: ${[...st].sort().join(' ')}\n`);
    expect(findings, findings.slice(0, 15).join('\n')).to.deep.equal([]);
    expect(refused.length).to.be.greaterThan(300);
    await usageSettled(20_000);
    expect(await UsageEvent.count({ where: { requestId: { [Op.in]: refused } } }), 'usage events of refused requests').to.equal(0);
    const health = await rawRequest(env().gw.url, 'GET', '/healthz');
    expect(health.status).to.equal(200);
    const ok = await rawRequest(env().gw.url, 'POST', '/v1/chat/completions', { headers: { 'SERVICE-API-KEY': o.key, 'content-type': 'application/json' }, body: JSON.stringify(JSON_ROUTES[0].body) });
    expect(ok.status, ok.text).to.equal(200);
  });
});
