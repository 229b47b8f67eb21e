import { expect } from 'chai';
import { env, resetSim, startGateway, type TestGateway } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { keyHeader } from '../../helpers/http';
import { expectErrorEnvelope } from '../../helpers/errors';
import { usageSettled } from '../../helpers/usage';
import { roomInMinute, waitFor } from '../../helpers/wait';
import { makeWav, SPEECH_LIKE } from '../../helpers/wav';
import { BOUNDARY, multipartBody, transcriptionParts } from '../../helpers/multipart';
import { search, searchOrg } from '../search/helpers';
import { Model, Provider, SearchProvider, SearchUsage, UsageEvent } from '../../../shared/db/models';
import { updateKeyControls } from '../../../shared/tenancy/ops';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { ledgerSpend } from '../../../shared/limits/ledger-spend';
import { budgetStatus } from '../../../shared/limits/limits';
import type { Budget } from '../../../shared/limits/controls';
import Anthropic from '@anthropic-ai/sdk';
import { startSearchUpstream, useSearchProvider } from '../../helpers/search-upstream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

const MODEL = 'test-whisper-budget';
const speech = makeWav(SPEECH_LIKE); // 4 s of sound

async function transcribe(key: string, base: string): Promise<{ status: number; body: any; requestId: string }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = await fetch(`${base}/v1/audio/transcriptions`, {
    method: 'POST',
    headers: { ...keyHeader(key), 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    body: multipartBody(transcriptionParts(speech, [], MODEL)),
  });
  return { status: res.status, body: await res.json(), requestId: res.headers.get('x-service-request-id') ?? '' };
}

/** Waits until every reservation of the budget has settled; answers its figures. */
async function settledStatus(orgId: string, keyId: string, b: Budget) {
  const s = await waitFor(async () => {
    const st = await budgetStatus(env().redis, orgId, 'key', keyId, b);
    return st.reserved_usd === 0 ? st : null;
  });
  expect(s, 'reservations all settled').to.not.equal(null);
  return s!;
}

describe('key budgets: audio seconds and web searches reserve at their price', () => {
  let second: TestGateway;
  before(async () => {
    second = await startGateway();
    const sim = await Provider.findOne({ where: { name: 'simulator' } });
    // 5 s at most at 100 µ$ a second: a worst case of 500 µ$ against a real 4 s (400 µ$)
    await Model.create({
      providerId: sim!.id, upstreamName: 'sim-whisper-1', publicId: MODEL, displayName: 'Budget whisper', contextWindow: null, maxOutputTokens: null,
      capabilities: { transcription: true }, config: { audio_config: { max_duration_seconds: 5, supports_word_timestamps: false } }, prices: { audio_second: 100 },
    });
    await bumpEpoch(env().redis);
  });
  after(async () => {
    await Model.destroy({ where: { publicId: MODEL } });
    await bumpEpoch(env().redis);
    await second.close();
  });
  beforeEach(resetSim);

  it('24 concurrent transcriptions over two pods against a budget of three worst cases: three run, the rest 402 with nothing billed', async function () {
    this.timeout(120_000);
    const o = await buildOrg(env().redis, { laneOverrides: { 'audio:default': 100 } });
    const budget: Budget = { micros: 1500, period: 'day' };
    await updateKeyControls(env().redis, o.keyId, { budgetMicros: budget.micros, budgetPeriod: budget.period });
    const replies = await Promise.all(Array.from({ length: 24 }, (_, i) => transcribe(o.key, i % 2 ? second.url : env().gw.url)));
    const ok = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 402);
    expect(ok.length + refused.length, JSON.stringify(replies.find((r) => r.status !== 200 && r.status !== 402)?.body)).to.equal(24);
    // each admitted one holds 500 µ$ until it settles at 400: three fill the budget (a fourth needs 1200 + 500);
    // three is also the tests' gateway-wide audio ceiling (AUDIO_MAX_CONCURRENT), so none is refused there
    expect(ok.length).to.equal(3);
    for (const r of refused) {
      expectErrorEnvelope(JSON.stringify(r.body), 'budget_exceeded');
      expect(r.body.error.message).to.contain('$0.0015 per day');
    }
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { apiKeyId: o.keyId } });
    expect(events.map((e) => e.requestId).sort(), 'only the admitted transcriptions are billed').to.deep.equal(ok.map((r) => r.requestId).sort());
    const spent = await ledgerSpend('key', o.keyId, null);
    expect(spent, 'three transcriptions of 4 s').to.equal(1200);
    const status = await settledStatus(o.org.id, o.keyId, budget);
    expect(status.spent_usd).to.equal(0.0012);
    expect(status.remaining_usd).to.equal(0.0003);
    expect(env().sim.log.entries.filter((e) => e.path.endsWith('/audio/transcriptions')), 'only the admitted reached the upstream').to.have.length(3);
  });

  it("a transcription is one request for the key's rpm: past it, 429 rate_limit_exceeded with Retry-After, not sent upstream", async () => {
    const o = await buildOrg(env().redis);
    await updateKeyControls(env().redis, o.keyId, { rpm: 1 });
    expect(await roomInMinute(), 'both transcriptions in one minute window').to.equal(true);
    expect((await transcribe(o.key, env().gw.url)).status).to.equal(200);
    const second = await fetch(`${env().gw.url}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      body: multipartBody(transcriptionParts(speech, [], MODEL)),
    });
    expect(second.status).to.equal(429);
    expectErrorEnvelope(await second.text(), 'rate_limit_exceeded');
    expect(Number(second.headers.get('retry-after'))).to.be.within(1, 60);
    expect(env().sim.log.entries.filter((e) => e.path.endsWith('/audio/transcriptions'))).to.have.length(1);
  });

  it('20 concurrent paid searches over two pods against a budget of two: two run and are charged, the rest 402 and neither charged nor counted', async function () {
    this.timeout(60_000);
    // no allowance: every search is overage at the provider's price (5000 µ$)
    const o = await searchOrg({ monthlyAllowance: 0, overageEnabled: true, overageMonthlyLimit: 1000 });
    const budget: Budget = { micros: 12_000, period: 'month' };
    await updateKeyControls(env().redis, o.keyId, { budgetMicros: budget.micros, budgetPeriod: budget.period });
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      i % 2 ? fetch(`${second.url}/v1/alpha/search`, { method: 'POST', headers: { ...keyHeader(o.key), 'content-type': 'application/json' }, body: JSON.stringify({ query: `q${i}` }) })
        .then(async (r) => ({ status: r.status, text: await r.text(), headers: r.headers }))
        : search(o.key, { query: `q${i}` }).then((r) => ({ status: r.status, text: r.text, headers: r.headers })),
    ));
    const ok = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 402);
    expect(ok.length + refused.length, replies.find((r) => r.status !== 200 && r.status !== 402)?.text).to.equal(20);
    expect(ok.length, 'a third search would need 15000 µ$').to.equal(2);
    for (const r of ok) expect(JSON.parse(r.text).usage).to.include({ charge_class: 'overage', price_micros: 5000 });
    for (const r of refused) {
      expectErrorEnvelope(r.text, 'budget_exceeded');
      expect(JSON.parse(r.text).error.message).to.contain("API key's budget of $0.012 per month");
    }
    const rows = await SearchUsage.findAll({ where: { apiKeyId: o.keyId } });
    expect(rows.map((r) => r.requestId).sort(), 'only the admitted searches are on the ledger').to.deep.equal(ok.map((r) => r.headers.get('x-service-request-id')).sort());
    expect(await ledgerSpend('key', o.keyId, null)).to.equal(10_000);
    const status = await settledStatus(o.org.id, o.keyId, budget);
    expect(status.spent_usd).to.equal(0.01);
    // the refused searches gave their entitlement back: the org may still search when the budget allows
    await updateKeyControls(env().redis, o.keyId, { budgetMicros: 15_000, budgetPeriod: 'month' });
    const more = await search(o.key, { query: 'after' });
    expect(more.status, more.text).to.equal(200);
    expect(await ledgerSpend('key', o.keyId, null)).to.equal(15_000);
  });

  it('the MCP web_search tool (official SDK client): a paid search that does not fit is a tool error budget_exceeded, charged nothing', async () => {
    const o = await searchOrg({ monthlyAllowance: 0, overageEnabled: true, overageMonthlyLimit: 1000 });
    await updateKeyControls(env().redis, o.keyId, { budgetMicros: 6000, budgetPeriod: 'day' });
    const client = new Client({ name: 'budget-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${env().gw.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${o.key}` } } }));
    try {
      const first = (await client.callTool({ name: 'web_search', arguments: { query: 'one' } })) as CallToolResult;
      expect(first.isError ?? false, JSON.stringify(first)).to.equal(false);
      const second = (await client.callTool({ name: 'web_search', arguments: { query: 'two' } })) as CallToolResult;
      expect(second.isError, JSON.stringify(second)).to.equal(true);
      const err = JSON.parse((second.content[0] as { text: string }).text).error;
      expect(err).to.include({ code: 'budget_exceeded', status: 402 });
    } finally {
      await client.close();
    }
    expect((await SearchUsage.findAll({ where: { apiKeyId: o.keyId } })).map((r) => Number(r.priceMicros))).to.deep.equal([5000]);
  });

  it('native web search (messages, Anthropic SDK): a paid search past the budget comes back in band as too_many_requests (code budget_exceeded); the answer goes on and only the model turns are billed', async () => {
    const up = await startSearchUpstream();
    try {
      const o = await buildOrg(env().redis);
      await useSearchProvider(o.org.id, up, 'keys31-native-budget', { monthlyAllowance: 0, overageEnabled: true, overageMonthlyLimit: 100 });
      await SearchProvider.update({ priceMicros: '5000' }, { where: { name: 'keys31-native-budget' } });
      await bumpEpoch(env().redis);
      // sim-chat turns of at most 100 output tokens reserve a few hundred µ$; a search costs 5000
      await updateKeyControls(env().redis, o.keyId, { budgetMicros: 3000, budgetPeriod: 'total' });
      const client = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
      const m = await client.messages.create({ model: 'sim-chat', max_tokens: 100, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'Please search for honey bees' }] });
      const result = m.content.find((b) => b.type === 'web_search_tool_result') as unknown as { content: { type: string; error_code: string; code: string } };
      expect(result.content).to.deep.include({ type: 'web_search_tool_result_error', error_code: 'too_many_requests', code: 'budget_exceeded' });
      expect(m.usage.server_tool_use?.web_search_requests ?? 0).to.equal(0);
      expect(await SearchUsage.count({ where: { orgId: o.org.id } }), 'no search charged').to.equal(0);
      expect(up.queries, 'the provider was not called').to.deep.equal([]);
      await usageSettled();
      const spent = await ledgerSpend('key', o.keyId, null);
      expect(spent).to.be.greaterThan(0).and.at.most(3000);
    } finally {
      await up.close();
    }
  });

  it('free searches (within the allowance) reserve nothing: a spent budget does not stop them', async () => {
    const o = await searchOrg({ monthlyAllowance: 5, overageEnabled: false });
    await updateKeyControls(env().redis, o.keyId, { budgetMicros: 0, budgetPeriod: 'total' });
    const r = await search(o.key, { query: 'free' });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.usage).to.include({ charge_class: 'allowance', price_micros: 0 });
  });
});
