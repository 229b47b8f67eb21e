import zlib from 'zlib';
import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { keyHeader, type Reply } from '../../helpers/http';
import { expectErrorEnvelope } from '../../helpers/errors';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';

/**
 * Input that used to answer 500 (or bill a failed request): an undecodable Content-Encoding, JSON
 * nested 5,000 deep, and text Postgres cannot store (NUL, lone surrogates). Every JSON route answers
 * a 4xx envelope before anything goes upstream, and nothing is billed.
 */
describe('bad input is a 4xx, never a 500, and is not billed', () => {
  let o: TestOrg;
  beforeEach(async () => {
    resetSim();
    o = await buildOrg(env().redis); // a fresh org each test: "nothing billed" looks at this test only
  });

  const routes: Array<{ path: string; body: (text: string) => Record<string, unknown> }> = [
    { path: '/v1/chat/completions', body: (t) => ({ model: 'sim-chat', messages: [{ role: 'user', content: t }] }) },
    { path: '/v1/messages', body: (t) => ({ model: 'sim-chat', max_tokens: 5, messages: [{ role: 'user', content: t }] }) },
    { path: '/v1/messages/count_tokens', body: (t) => ({ model: 'sim-chat', messages: [{ role: 'user', content: t }] }) },
    { path: '/v1/responses', body: (t) => ({ model: 'sim-chat', input: t }) },
    { path: '/v1/embeddings', body: (t) => ({ model: 'sim-embed', input: t }) },
    { path: '/v1/systemone', body: (t) => ({ model: 'sim-decide', state: t }) },
  ];

  async function post(path: string, body: Buffer | string, headers: Record<string, string> = {}): Promise<Reply> {
    const res = await fetch(`${env().gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...keyHeader(o.key), ...headers }, body });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  }

  async function expectRefusedUnbilled(r: Reply, statuses: number[]): Promise<void> {
    expect(statuses, r.text).to.include(r.status);
    expect(r.body?.error?.code, r.text).to.be.a('string');
    expectErrorEnvelope(r.text, r.body.error.code);
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'nothing billed').to.equal(0);
  }

  for (const route of routes) {
    describe(route.path, () => {
      it('an undecodable gzip / deflate / br body: 400 or 415 envelope', async () => {
        for (const encoding of ['gzip', 'deflate', 'br']) {
          const r = await post(route.path, Buffer.from('this is not compressed at all'), { 'content-encoding': encoding });
          await expectRefusedUnbilled(r, [400, 415]);
        }
        const truncated = zlib.gzipSync(JSON.stringify(route.body('hello'))).subarray(0, 20);
        await expectRefusedUnbilled(await post(route.path, truncated, { 'content-encoding': 'gzip' }), [400, 415]);
      });

      it('JSON nested 5,000 deep: 400', async () => {
        const deep = '['.repeat(5000) + ']'.repeat(5000);
        const raw = JSON.stringify(route.body('x')).replace('"x"', deep);
        await expectRefusedUnbilled(await post(route.path, raw), [400]);
      });

      it('a NUL character or a lone surrogate, in a value or a key: 400 before any upstream call', async () => {
        for (const bad of ['a\u0000b', 'a\ud800b', 'tail\udc00']) {
          await expectRefusedUnbilled(await post(route.path, JSON.stringify(route.body(bad))), [400]);
          await expectRefusedUnbilled(await post(route.path, JSON.stringify({ ...route.body('ok'), metadata: { [bad]: 'v' } })), [400]);
        }
      });
    });
  }

  it('/v1/chat/completions: text Postgres cannot store is refused however it is encoded (UTF-16 bodies, raw bytes, escapes beside plain text)', async () => {
    const body = (t: string) => JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: t }] });
    // no \u escape anywhere: the unpaired surrogate and the NUL are raw code units of a UTF-16 body
    for (const bad of ['a\ud800b', 'a\u0000b']) {
      const raw = body('x').replace('"x"', `"${bad}"`);
      expect(raw.includes('\\u'), 'raw, not escaped').to.equal(false);
      await expectRefusedUnbilled(await post('/v1/chat/completions', Buffer.from(raw, 'utf16le'), { 'content-type': 'application/json; charset=utf-16le' }), [400]);
    }
    // invalid UTF-8 (an encoded surrogate, CESU-8) decodes to U+FFFD: stored, not refused
    const cesu = Buffer.concat([Buffer.from(body('x').split('"x"')[0] + '"a'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('b"' + body('x').split('"x"')[1])]);
    const served = await post('/v1/chat/completions', cesu);
    expect(served.status, served.text).to.equal(200);
  });

  it('a UTF-16 body nested deeper than 128 is refused like a UTF-8 one (its bytes cannot be scanned for brackets): 400, nothing upstream', async () => {
    // U+0122 is the bytes 22 01 in UTF-16LE: a byte scan took its 0x22 for a quote and the brackets after it for text
    for (const depth of [200, 5000]) {
      const deep = `["\u0122",${'['.repeat(depth)}${']'.repeat(depth)}]`;
      for (const route of routes.filter((r) => r.path !== '/v1/systemone')) {
        const raw = JSON.stringify(route.body('x')).replace('"x"', deep);
        for (const [charset, bytes] of [['utf-16le', Buffer.from(raw, 'utf16le')], ['utf-16be', Buffer.from(raw, 'utf16le').swap16()]] as const) {
          const r = await post(route.path, bytes, { 'content-type': `application/json; charset=${charset}`, 'anthropic-version': '2023-06-01' });
          await expectRefusedUnbilled(r, [400]);
          expect(r.body.error.message, `${route.path} ${charset} ${depth}`).to.include('nested deeper than 128');
        }
      }
    }
    // not too deep: served as before
    const ok = await post('/v1/chat/completions', Buffer.from(JSON.stringify(routes[0].body('\u0122 ok')), 'utf16le'), { 'content-type': 'application/json; charset=utf-16le' });
    expect(ok.status, ok.text).to.equal(200);
  });

  it('/v1/chat/completions: a number JSON parses to Infinity (1e309) or out of OpenAI\'s range in top_logprobs, seed or a penalty is a 400 naming it, never sent on as null', async () => {
    const head = '{"model":"sim-chat","messages":[{"role":"user","content":"hi"}],';
    // out of range or mistyped: OpenAI's codes; a number JSON cannot hold: the gateway's invalid_request
    const cases = [
      ['top_logprobs', '1e309', 'invalid_request'],
      ['top_logprobs', '21', 'integer_above_max_value'],
      ['top_logprobs', '-1', 'integer_below_min_value'],
      ['seed', '1e309', 'invalid_request'],
      ['seed', '1.5', 'invalid_type'],
      ['frequency_penalty', '-1e309', 'invalid_request'],
      ['presence_penalty', '2.5', 'decimal_above_max_value'],
      ['logprobs', '"yes"', 'invalid_type'],
    ];
    for (const [field, value, code] of cases) {
      const r = await post('/v1/chat/completions', `${head}"${field}":${value}}`);
      await expectRefusedUnbilled(r, [400]);
      expect(r.body.error.code, r.text).to.equal(code);
      expect(r.body.error.param, r.text).to.equal(field);
    }
    // within range (a seed beyond 2^53 included: any integer JSON can hold) it is served
    const ok = await post('/v1/chat/completions', `${head}"logprobs":true,"top_logprobs":20,"seed":18446744073709551615,"frequency_penalty":-2,"presence_penalty":2}`);
    expect(ok.status, ok.text).to.equal(200);
  });

  it('well-formed astral characters (surrogate pairs) and ordinary escapes are accepted', async () => {
    const r = await post('/v1/responses', JSON.stringify({ model: 'sim-chat', input: 'emoji \ud83d\ude00 and tab\t' }));
    expect(r.status, r.text).to.equal(200);
  });

  it('/v1/responses: an upstream answer holding NUL or a lone surrogate is delivered, stored (as U+FFFD) and billed once, never a 500', async () => {
    env().sim.knobs.set('sim-chat-1', { replyWords: ['bad\u0000byte', 'lone\ud800half'] });
    const r = await post('/v1/responses', JSON.stringify({ model: 'sim-chat', input: 'hi' }));
    expect(r.status, r.text).to.equal(200);
    const stored = await fetch(`${env().gw.url}/v1/responses/${r.body.id}`, { headers: keyHeader(o.key) });
    expect(stored.status).to.equal(200);
    expect(await stored.text()).to.include('bad\ufffdbyte');
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'delivered: billed once').to.equal(1);
  });
});
