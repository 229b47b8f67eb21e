import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { updateKeyControls } from '../../../shared/tenancy/ops';
import { roomInMinute } from '../../helpers/wait';

const OPENAI = ['limit', 'remaining', 'reset'].flatMap((f) => [`x-ratelimit-${f}-requests`, `x-ratelimit-${f}-tokens`]);
const ANTHROPIC = ['requests', 'tokens'].flatMap((u) => ['limit', 'remaining', 'reset'].map((f) => `anthropic-ratelimit-${u}-${f}`));
const user = (content: string) => [{ role: 'user' as const, content }];
const msToMinuteEnd = () => 60_000 - (Date.now() % 60_000);

/** OpenAI's reset form (`59ms`, `1.5s`, `1m0s`) in ms. */
function durationMs(v: string | null): number {
  const m = /^(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s|(\d+)ms)$/.exec(v ?? '');
  expect(m, `a duration: ${v}`).to.not.equal(null);
  return Number(m![1] ?? 0) * 60_000 + Number(m![2] ?? 0) * 1000 + Number(m![3] ?? 0);
}

/** The figures of one answer, checked for form: limits as set, reset the end of the current minute. */
function openaiFigures(h: Headers) {
  expect(h.get('x-ratelimit-limit-requests')).to.equal('20');
  expect(h.get('x-ratelimit-limit-tokens')).to.equal('100000');
  for (const unit of ['requests', 'tokens']) expect(durationMs(h.get(`x-ratelimit-reset-${unit}`))).to.be.within(msToMinuteEnd() - 1, msToMinuteEnd() + 2000);
  return { requests: Number(h.get('x-ratelimit-remaining-requests')), tokens: Number(h.get('x-ratelimit-remaining-tokens')) };
}

function anthropicFigures(h: Headers) {
  expect(h.get('anthropic-ratelimit-requests-limit')).to.equal('20');
  expect(h.get('anthropic-ratelimit-tokens-limit')).to.equal('100000');
  const minuteEnd = Math.ceil(Date.now() / 60_000) * 60_000;
  for (const unit of ['requests', 'tokens']) {
    const reset = h.get(`anthropic-ratelimit-${unit}-reset`)!;
    expect(reset, 'RFC 3339, to the second').to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/);
    expect(Date.parse(reset)).to.be.oneOf([minuteEnd, minuteEnd + 60_000]);
  }
  for (const name of OPENAI) expect(h.get(name), name).to.equal(null);
  return { requests: Number(h.get('anthropic-ratelimit-requests-remaining')), tokens: Number(h.get('anthropic-ratelimit-tokens-remaining')) };
}

const present = (h: Headers) => [...OPENAI, ...ANTHROPIC].filter((n) => h.get(n) !== null);

describe('key controls: rate-limit response headers (x-ratelimit-*, anthropic-ratelimit-*)', () => {
  beforeEach(resetSim);

  it('every answer of a key with rpm and tpm carries its limits, remaining and reset in the dialect’s names, remaining going down request by request (JSON and streamed: chat, responses, embeddings, messages)', async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    await updateKeyControls(env().redis, o.keyId, { rpm: 20, tpm: 100_000 });
    const openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const anthropic = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
    expect(await roomInMinute(20_000)).to.equal(true);
    const seen: Array<{ requests: number; tokens: number }> = [];

    const chat = await openai.chat.completions.create({ model: 'sim-chat', max_tokens: 5, messages: user('hi') }).withResponse();
    seen.push(openaiFigures(chat.response.headers));
    expect(seen[0].requests, 'this request counted').to.equal(19);
    expect(seen[0].tokens, 'its input counted at admission').to.be.within(100_000 - 200, 100_000 - 1);
    for (const name of ANTHROPIC) expect(chat.response.headers.get(name), name).to.equal(null);

    const chatStream = await openai.chat.completions.create({ model: 'sim-chat', max_tokens: 5, messages: user('stream'), stream: true }).withResponse();
    seen.push(openaiFigures(chatStream.response.headers));
    for await (const chunk of chatStream.data) expect(chunk.object).to.equal('chat.completion.chunk');

    const resp = await openai.responses.create({ model: 'sim-chat', input: 'hi' }).withResponse();
    seen.push(openaiFigures(resp.response.headers));
    const respStream = await openai.responses.create({ model: 'sim-chat', input: 'stream', stream: true }).withResponse();
    seen.push(openaiFigures(respStream.response.headers));
    for await (const ev of respStream.data) expect(ev.type).to.be.a('string');

    const emb = await openai.embeddings.create({ model: 'sim-embed', input: ['some words to count'] }).withResponse();
    seen.push(openaiFigures(emb.response.headers));

    const msg = await anthropic.messages.create({ model: 'sim-claude', max_tokens: 16, messages: user('hi') }).withResponse();
    seen.push(anthropicFigures(msg.response.headers));
    const msgStream = await anthropic.messages.create({ model: 'sim-claude', max_tokens: 16, messages: user('stream'), stream: true }).withResponse();
    seen.push(anthropicFigures(msgStream.response.headers));
    for await (const ev of msgStream.data) expect(ev.type).to.be.a('string');

    expect(seen.map((s) => s.requests)).to.deep.equal([19, 18, 17, 16, 15, 14, 13]);
    for (let i = 1; i < seen.length; i++) expect(seen[i].tokens, `tokens remaining after answer ${i + 1}`).to.be.below(seen[i - 1].tokens);
  });

  it('the 429 rate_limit_exceeded refusal carries them beside Retry-After, remaining 0 on the limit it refused on (OpenAI and messages paths, rpm and tpm); a budget’s 402 carries them too', async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    await updateKeyControls(env().redis, o.keyId, { rpm: 1, tpm: 1000 });
    expect(await roomInMinute()).to.equal(true);
    const chat = () => call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', max_tokens: 5, messages: user('hi') } });
    const ok = await chat();
    expect(ok.status, ok.text).to.equal(200);
    const left = Number(ok.headers.get('x-ratelimit-remaining-tokens'));
    const refused = await chat();
    expect([refused.status, refused.body.error.code]).to.deep.equal([429, 'rate_limit_exceeded']);
    const h = refused.headers;
    expect(Number(h.get('retry-after'))).to.be.within(1, 60);
    expect([h.get('x-ratelimit-limit-requests'), h.get('x-ratelimit-remaining-requests')]).to.deep.equal(['1', '0']);
    expect(h.get('x-ratelimit-limit-tokens')).to.equal('1000');
    expect(Number(h.get('x-ratelimit-remaining-tokens')), 'tokens: what the minute counted, the refused request not in it').to.be.within(1, left);
    expect(durationMs(h.get('x-ratelimit-reset-requests'))).to.be.within(1, 60_000);

    const m = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' }, json: { model: 'sim-claude', max_tokens: 16, messages: user('hi') } });
    expect([m.status, m.body.error.type]).to.deep.equal([429, 'rate_limit_error']);
    expect([m.headers.get('anthropic-ratelimit-requests-limit'), m.headers.get('anthropic-ratelimit-requests-remaining')]).to.deep.equal(['1', '0']);
    expect(m.headers.get('anthropic-ratelimit-requests-reset')).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/);
    expect(m.headers.get('x-ratelimit-remaining-requests')).to.equal(null);

    const t = await buildOrg(env().redis);
    await updateKeyControls(env().redis, t.keyId, { tpm: 30 });
    const long = await call('POST', '/v1/chat/completions', { headers: keyHeader(t.key), json: { model: 'sim-chat', messages: user('word '.repeat(100)) } });
    expect([long.status, long.body.error.code]).to.deep.equal([429, 'rate_limit_exceeded']);
    expect([long.headers.get('x-ratelimit-limit-tokens'), long.headers.get('x-ratelimit-remaining-tokens')]).to.deep.equal(['30', '0']);
    expect(long.headers.get('x-ratelimit-limit-requests'), 'no rpm: no requests trio').to.equal(null);
    // input alone over the tpm fits in no minute: not retryable, so no Retry-After, and the SDKs told not to retry
    expect([long.headers.get('retry-after'), long.headers.get('x-should-retry')]).to.deep.equal([null, 'false']);
    expect(long.body.error.message).to.include('do not fit in any minute');
    const t0 = Date.now();
    const sdk = await new OpenAI({ apiKey: t.key, baseURL: `${env().gw.url}/v1`, maxRetries: 2 }).chat.completions.create({ model: 'sim-chat', messages: user('word '.repeat(100)) }).catch((e: Error) => e);
    expect(sdk).to.be.instanceOf(OpenAI.RateLimitError);
    const msg = await new Anthropic({ apiKey: t.key, baseURL: env().gw.url, maxRetries: 2 }).messages.create({ model: 'sim-claude', max_tokens: 16, messages: user('word '.repeat(100)) }).catch((e: Error) => e);
    expect(msg).to.be.instanceOf(Anthropic.RateLimitError);
    expect(Date.now() - t0, 'neither SDK waited to retry it').to.be.below(1500);

    // a budget's refusal (402) after the rate limits passed: the figures, this request not counted
    const p = await buildOrg(env().redis);
    await updateKeyControls(env().redis, p.keyId, { rpm: 5, budgetMicros: 1, budgetPeriod: 'day' });
    const poor = await call('POST', '/v1/chat/completions', { headers: keyHeader(p.key), json: { model: 'sim-chat', messages: user('hi') } });
    expect([poor.status, poor.body.error.code]).to.deep.equal([402, 'budget_exceeded']);
    expect([poor.headers.get('x-ratelimit-limit-requests'), poor.headers.get('x-ratelimit-remaining-requests')]).to.deep.equal(['5', '5']);
  });

  it('only for the limits the key has: none without rpm or tpm (no controls, or a budget only), the tokens trio for tpm alone, the requests trio for rpm alone', async () => {
    const o = await buildOrg(env().redis);
    const b = await buildOrg(env().redis);
    await updateKeyControls(env().redis, b.keyId, { budgetMicros: 10_000_000, budgetPeriod: 'day' });
    const answers = async (key: string) => {
      const openai = new OpenAI({ apiKey: key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
      const chat = await openai.chat.completions.create({ model: 'sim-chat', max_tokens: 5, messages: user('hi') }).withResponse();
      const stream = await openai.chat.completions.create({ model: 'sim-chat', max_tokens: 5, messages: user('hi'), stream: true }).withResponse();
      for await (const chunk of stream.data) expect(chunk).to.be.an('object');
      const msg = await new Anthropic({ apiKey: key, baseURL: env().gw.url, maxRetries: 0 }).messages.create({ model: 'sim-claude', max_tokens: 16, messages: user('hi') }).asResponse();
      expect(msg.status).to.equal(200);
      return [chat.response.headers, stream.response.headers, msg.headers].map(present);
    };
    for (const key of [o.key, b.key]) expect(await answers(key)).to.deep.equal([[], [], []]);

    await updateKeyControls(env().redis, o.keyId, { tpm: 100_000 });
    await updateKeyControls(env().redis, b.keyId, { rpm: 100 });
    const tokens = ['x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens'];
    const requests = tokens.map((n) => n.replace('tokens', 'requests'));
    expect(await answers(o.key)).to.deep.equal([tokens, tokens, ANTHROPIC.filter((n) => n.includes('tokens'))]);
    expect(await answers(b.key)).to.deep.equal([requests, requests, ANTHROPIC.filter((n) => n.includes('requests'))]);
  });
});
