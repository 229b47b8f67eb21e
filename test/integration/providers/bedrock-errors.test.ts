import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';
import { knobs, SECRET_KEY, seedBedrock } from './bedrock-setup';

const chat = (extra: Record<string, unknown> = {}) => ({ model: 'sim-bedrock-claude', messages: [{ role: 'user', content: 'x' }], ...extra });

/** Refusals and upstream failures on a Bedrock upstream: status, code, no stack or secret, nothing billed. */
describe('bedrock upstream: refusals and failures', () => {
  let o: TestOrg;
  let h: Record<string, string>;
  let billed: number;
  beforeEach(async () => {
    resetSim();
    await usageSettled();
    billed = await UsageEvent.count({ where: { orgId: o.org.id } });
  });
  afterEach(async () => {
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'nothing billed').to.equal(billed);
  });
  before(async () => {
    await seedBedrock();
    o = await buildOrg(env().redis);
    h = keyHeader(o.key);
  });

  it('refuses untranslatable fields with 400 unsupported_parameter naming the field, before any upstream call', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ n: 2 }, 'n'],
      [{ logprobs: true }, 'logprobs'],
      [{ response_format: { type: 'json_object' } }, 'response_format'],
      [{ parallel_tool_calls: false, tools: [{ type: 'function', function: { name: 't' } }] }, 'parallel_tool_calls'],
      [{ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] }, 'messages'],
    ];
    for (const [extra, param] of cases) {
      for (const stream of [false, true]) {
        const r = await call('POST', '/v1/chat/completions', { headers: h, json: chat({ ...extra, stream }) });
        expect(r.status, `${param} stream=${stream}: ${r.text}`).to.equal(400);
        expect(r.body.error).to.include({ code: 'unsupported_parameter', param });
        expect(r.body.error.message).to.include(`\`${param}\``);
      }
    }
    const m = await call('POST', '/v1/messages', { headers: { ...h, 'anthropic-version': '2023-06-01' }, json: { model: 'sim-bedrock-claude', max_tokens: 10, messages: [{ role: 'user', content: 'x' }], tools: [{ name: 't', input_schema: { type: 'object' } }], tool_choice: { type: 'auto', disable_parallel_tool_use: true } } });
    expect(m.status, m.text).to.equal(400);
    // named as the messages client sent it (docs/dialects.md, "Errors in the messages dialect")
    expect(m.body.error.message).to.match(/^`tool_choice\.disable_parallel_tool_use` is not supported on this model/);
    expect(env().sim.log.entries).to.have.length(0);
  });

  it('maps Converse error answers to the gateway codes, JSON and streamed', async function () {
    // each retryable status is tried POOL_MAX_ATTEMPTS times by the pool's router, waiting its Retry-After (1 s)
    this.timeout(90_000);
    for (const [status, expected, code] of [[429, 429, 'upstream_rate_limited'], [400, 400, 'upstream_invalid_request'], [500, 502, 'upstream_error'], [503, 503, 'upstream_unavailable']] as const) {
      await knobs({ status, retryAfter: 0 });
      for (const stream of [false, true]) {
        const r = await call('POST', '/v1/chat/completions', { headers: h, json: chat({ stream }) });
        expect(r.status, `${status} stream=${stream}: ${r.text}`).to.equal(expected);
        expect(r.body.error.code).to.equal(code);
        expect(r.text).not.to.match(/at .*\.js:\d+/);
        if (expected === 429 || expected === 503) expect(r.headers.get('retry-after')).to.match(/^\d+$/);
      }
    }
  });

  it("a refused platform credential is a 502 that does not quote the key", async () => {
    await knobs({ status: 403 });
    const r = await call('POST', '/v1/chat/completions', { headers: h, json: chat() });
    expect(r.status, r.text).to.equal(502);
    expect(r.body.error.code).to.equal('upstream_auth_failed');
    expect(r.text).not.to.include(SECRET_KEY);
    expect(r.text).not.to.include('AKIDSIMULATED');
  });

  it('a malformed answer is a 502 upstream_error', async () => {
    await knobs({ malformed: true });
    const r = await call('POST', '/v1/chat/completions', { headers: h, json: chat() });
    expect(r.status, r.text).to.equal(502);
    expect(r.body.error).to.include({ code: 'upstream_error', message: 'The upstream answered with a malformed body.' });
  });

  it('a stream cut mid-way ends with an in-band error in chat and messages', async () => {
    await knobs({ dropAfterChunks: 3 });
    const s = await postSse('/v1/chat/completions', h, chat({ stream: true }));
    expect(s.status).to.equal(200);
    expect(s.events.at(-1)!.data.error).to.include({ code: 'upstream_error' });
    await knobs({ dropAfterChunks: 3 });
    const m = await postSse('/v1/messages', { ...h, 'anthropic-version': '2023-06-01' }, { model: 'sim-bedrock-claude', max_tokens: 50, messages: [{ role: 'user', content: 'x' }], stream: true });
    expect(m.status).to.equal(200);
    expect(m.events.at(-1)!.event).to.equal('error');
  });
});
