import crypto from 'crypto';
import { expect } from 'chai';
import { QueryTypes } from 'sequelize';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { db } from '../../../shared/db/sequelize';
import { ApiKey, Model, UsageEvent } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { config } from '../../../shared/config/env';
import { searchOrg } from '../search/helpers';

const PROMPT = 'request-log-secret-prompt-words';

type Row = Record<string, unknown>;

/** The request log row of a request, once the outbox is drained. */
async function logRow(requestId: string): Promise<Row | undefined> {
  await usageSettled();
  const rows = await db().query<Row>('SELECT * FROM request_logs WHERE request_id = :requestId', { type: QueryTypes.SELECT, replacements: { requestId } });
  expect(rows.length, `rows for ${requestId}`).to.be.at.most(1);
  return rows[0];
}

/** The cost the ledger charges for these tokens of sim-chat (shared/limits/ledger-spend.ts). */
async function chatCost(input: number, output: number): Promise<number> {
  const m = await Model.findOne({ where: { publicId: 'sim-chat' } });
  const p = (m!.prices ?? {}) as Record<string, number>;
  return input * (p.input_token ?? 0) + output * (p.output_token ?? 0);
}

/** A streamed sim-chat completion through the official OpenAI SDK, read to its end: its usage chunk and request id. */
async function streamedChat(key: string): Promise<{ usage: OpenAI.CompletionUsage | undefined; requestId: string }> {
  const openai = new OpenAI({ apiKey: key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  const { data: stream, response } = await openai.chat.completions
    .create({ model: 'sim-chat', messages: [{ role: 'user', content: PROMPT }], stream: true, stream_options: { include_usage: true } })
    .withResponse();
  let usage: OpenAI.CompletionUsage | undefined;
  for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
  return { usage, requestId: response.headers.get('x-service-request-id')! };
}

/** Nothing of what the caller sent or received is stored: metadata only. */
function metadataOnly(row: Row): void {
  expect(JSON.stringify(row)).not.to.contain(PROMPT);
  expect(JSON.stringify(row)).not.to.contain('svc_');
}

describe('request log: one row per request, through the usage outbox', () => {
  let o: TestOrg;
  before(async () => {
    o = await buildOrg(env().redis);
  });
  beforeEach(resetSim);

  it('a successful request (official OpenAI SDK): every field, from the same outbox entry as its usage event', async () => {
    const openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const t0 = Date.now();
    const { data, response } = await openai.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: PROMPT }] }).withResponse();
    const t1 = Date.now();
    const requestId = response.headers.get('x-service-request-id')!;
    const row = (await logRow(requestId))!;
    expect(row, 'a row').to.not.equal(undefined);
    const usage = await UsageEvent.findOne({ where: { requestId } });
    expect(row).to.deep.include({
      request_id: requestId,
      org_id: o.org.id,
      project_id: null,
      api_key_id: o.keyId,
      user_id: null,
      route: '/v1/chat/completions',
      dialect: 'openai-chat',
      model: 'sim-chat',
      deployment: response.headers.get('x-service-deployment'),
      lane: 'interactive',
      status: 200,
      error_code: null,
      stream: false,
      attempts: Number(response.headers.get('x-service-attempts')),
      input_tokens: data.usage!.prompt_tokens,
      output_tokens: data.usage!.completion_tokens,
      trace_id: null,
    });
    expect(row.deployment).to.be.a('string').and.not.equal('');
    expect(row.attempts).to.equal(1);
    expect(usage!.deployment).to.equal(row.deployment);
    const created = new Date(row.created_at as string).getTime();
    expect(created).to.be.within(t0 - 5, t1);
    const [lane, queue, ttfb, total] = [row.lane_ms, row.queue_ms, row.ttfb_ms, row.total_ms].map(Number);
    expect(lane).to.be.at.least(0);
    expect(queue).to.be.at.least(0);
    expect(ttfb).to.be.at.most(total);
    expect(lane + queue).to.be.at.most(total);
    expect(total).to.be.at.most(t1 - t0 + 5);
    expect(Number(row.cost_micros)).to.equal(await chatCost(data.usage!.prompt_tokens, data.usage!.completion_tokens));
    expect(Number(row.cost_micros)).to.be.above(0);
    metadataOnly(row);
  });

  it('a streamed request: stream true, first byte before the end, tokens as the final usage chunk says', async () => {
    env().sim.knobs.set('sim-chat-1', { tokenDelayMs: 30, outputWords: 8 });
    const { usage, requestId } = await streamedChat(o.key);
    const row = (await logRow(requestId))!;
    expect(row).to.deep.include({ status: 200, stream: true, error_code: null, input_tokens: usage!.prompt_tokens, output_tokens: usage!.completion_tokens });
    expect(Number(row.ttfb_ms), 'the first chunk came before the 8 words at 30 ms each').to.be.below(Number(row.total_ms) - 100);
    metadataOnly(row);
  });

  it('a streamed request whose final usage chunk reports cached and reasoning tokens: both in the row, as the client saw them', async () => {
    env().sim.knobs.set('sim-chat-1', { usageExtra: { prompt_tokens_details: { cached_tokens: 5 }, completion_tokens_details: { reasoning_tokens: 7 } } });
    const { usage, requestId } = await streamedChat(o.key);
    expect(usage!.prompt_tokens_details!.cached_tokens).to.equal(5);
    const row = (await logRow(requestId))!;
    expect(row).to.deep.include({ stream: true, status: 200, cached_tokens: usage!.prompt_tokens_details!.cached_tokens, reasoning_tokens: usage!.completion_tokens_details!.reasoning_tokens });

    env().sim.knobs.reset(); // an upstream that reports neither: null, not 0
    const plain = await streamedChat(o.key);
    expect(await logRow(plain.requestId)).to.deep.include({ cached_tokens: null, reasoning_tokens: null });
  });

  it('a streamed messages answer (official Anthropic SDK) whose message_start reports cache reads: cached tokens in the row', async () => {
    env().sim.knobs.set('sim-claude-1', { usageExtra: { cache_read_input_tokens: 6 } });
    const anthropic = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
    const { data: stream, response } = await anthropic.messages.create({ model: 'sim-claude', max_tokens: 50, messages: [{ role: 'user', content: PROMPT }], stream: true }).withResponse();
    let cached: number | null | undefined;
    for await (const ev of stream) if (ev.type === 'message_start') cached = ev.message.usage.cache_read_input_tokens;
    expect(cached).to.equal(6);
    const row = (await logRow(response.headers.get('x-service-request-id')!))!;
    expect(row).to.deep.include({ stream: true, status: 200, dialect: 'anthropic', cached_tokens: 6 });
  });

  it('a failed request: its status and error code, the attempts, nothing billed', async () => {
    env().sim.knobs.set('sim-chat-1', { status: 500 });
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: PROMPT }] } });
    expect(r.status).to.equal(502);
    const requestId = r.headers.get('x-service-request-id')!;
    const row = (await logRow(requestId))!;
    expect(row).to.deep.include({
      org_id: o.org.id, api_key_id: o.keyId, model: 'sim-chat', lane: 'interactive', status: 502, error_code: r.body.error.code,
      input_tokens: 0, output_tokens: 0, route: '/v1/chat/completions', dialect: 'openai-chat',
    });
    expect(row.attempts).to.equal(Number(r.headers.get('x-service-attempts') ?? 0));
    expect(Number(row.cost_micros)).to.equal(0);
    expect(await UsageEvent.count({ where: { requestId } })).to.equal(0);
    metadataOnly(row);
  });

  it('a stream that breaks after its first chunks: the in-band error\'s status and code, nothing billed', async () => {
    env().sim.knobs.set('sim-chat-1', { dropAfterChunks: 3 });
    const res = await fetch(`${env().gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', stream: true, messages: [{ role: 'user', content: PROMPT }] }),
    });
    expect(res.status).to.equal(200);
    const events = (await res.text()).split('\n\n').filter(Boolean);
    const code = JSON.parse(events[events.length - 1].slice(6)).error.code;
    const requestId = res.headers.get('x-service-request-id')!;
    const row = (await logRow(requestId))!;
    expect(row).to.deep.include({ status: 502, error_code: code, stream: true, lane: 'interactive', input_tokens: 0 });
    expect(Number(row.ttfb_ms)).to.be.at.most(Number(row.total_ms));
    expect(await UsageEvent.count({ where: { requestId } })).to.equal(0);
  });

  it('refusals before the queue: a 400, a 401 of a revoked key (under its org), none for an unknown key', async () => {
    const bad = await call('POST', '/v1/messages', { headers: { 'x-api-key': o.key, 'anthropic-version': '2023-06-01' }, json: { model: 'sim-chat', max_tokens: 'many', messages: [] } });
    expect(bad.status).to.equal(400);
    const badRow = (await logRow(bad.headers.get('x-service-request-id')!))!;
    expect(badRow).to.deep.include({ status: 400, error_code: bad.body.error.type === 'invalid_request_error' ? badRow.error_code : bad.body.error.code, route: '/v1/messages', dialect: 'anthropic', org_id: o.org.id, lane: null });
    expect(badRow.error_code).to.be.a('string').and.not.equal('');

    const victim = await buildOrg(env().redis);
    await ApiKey.update({ revokedAt: new Date() }, { where: { id: victim.keyId } });
    await bumpEpoch(env().redis);
    const revoked = await call('POST', '/v1/chat/completions', { headers: keyHeader(victim.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'x' }] } });
    expect(revoked.status).to.equal(401);
    expect(await logRow(revoked.headers.get('x-service-request-id')!)).to.deep.include({ status: 401, error_code: revoked.body.error.code, org_id: victim.org.id, api_key_id: victim.keyId });

    const unknown = await call('POST', '/v1/chat/completions', { headers: keyHeader(`svc_${crypto.randomBytes(24).toString('hex')}`), json: { model: 'sim-chat', messages: [] } });
    expect(unknown.status).to.equal(401);
    expect(await logRow(unknown.headers.get('x-service-request-id')!), 'no org to file it under').to.equal(undefined);
  });

  it('a revoked key sent past the address\'s failed-authentication limit writes no more rows (429s): its holder cannot fill the org\'s log', async function () {
    this.timeout(60_000);
    const victim = await buildOrg(env().redis);
    await ApiKey.update({ revokedAt: new Date() }, { where: { id: victim.keyId } });
    await bumpEpoch(env().redis);
    const ip = `203.0.113.${1 + Math.floor(Math.random() * 250)}`;
    const limit = config().authFailureLimit;
    const statuses: number[] = [];
    for (let i = 0; i < limit + 25; i++) {
      statuses.push((await call('GET', '/v1/models', { headers: { ...keyHeader(victim.key), 'x-forwarded-for': ip } })).status);
    }
    expect(statuses.filter((st) => st === 429).length, 'refused past the limit').to.be.at.least(25);
    await usageSettled();
    const [{ n }] = await db().query<{ n: string }>('SELECT count(*) AS n FROM request_logs WHERE org_id = :org', { type: QueryTypes.SELECT, replacements: { org: victim.org.id } });
    expect(Number(n), 'one row per 401, none per 429').to.equal(statuses.filter((st) => st === 401).length);
  });

  it('a cancelled request: 499 client_closed_request, its first byte, nothing billed', async () => {
    env().sim.knobs.set('sim-chat-1', { tokenDelayMs: 200, outputWords: 60 });
    const ac = new AbortController();
    const res = await fetch(`${env().gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', stream: true, messages: [{ role: 'user', content: PROMPT }] }),
      signal: ac.signal,
    });
    await res.body!.getReader().read();
    ac.abort();
    const requestId = res.headers.get('x-service-request-id')!;
    expect(await waitFor(async () => (await db().query('SELECT 1 FROM request_logs WHERE request_id = :requestId', { type: QueryTypes.SELECT, replacements: { requestId } })).length === 1, 10_000)).to.equal(true);
    const row = (await logRow(requestId))!;
    expect(row).to.deep.include({ status: 499, error_code: 'client_closed_request', stream: true, lane: 'interactive', model: 'sim-chat', input_tokens: 0 });
    expect(Number(row.ttfb_ms)).to.be.at.most(Number(row.total_ms));
    expect(await UsageEvent.count({ where: { requestId } })).to.equal(0);
  });

  it('an MCP tool call: its own row (the call id) with the /mcp route, and a failed call says so', async () => {
    const s = await searchOrg();
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${env().gw.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${s.key}` } } }));
    try {
      const ok = (await client.callTool({ name: 'web_search', arguments: { query: PROMPT, count: 2, provider: 'exa' } })) as CallToolResult;
      expect(ok.isError ?? false).to.equal(false);
      const refused = (await client.callTool({ name: 'web_search', arguments: { query: PROMPT, provider: 'no-such-provider' } })) as CallToolResult;
      expect(refused.isError).to.equal(true);
    } finally {
      await client.close();
    }
    await usageSettled();
    const all = await db().query<Row>("SELECT * FROM request_logs WHERE org_id = :org AND route = '/mcp' ORDER BY created_at", { type: QueryTypes.SELECT, replacements: { org: s.org.id } });
    // the tool calls: `<HTTP request id>-<n>`; the SDK's other exchanges (e.g. its GET for a stream, 405) are rows of their own
    const rows = all.filter((r) => /^req_[0-9a-f]+-\d+$/.test(String(r.request_id)));
    expect(rows).to.have.length(2);
    expect(rows[0]).to.deep.include({ api_key_id: s.keyId, dialect: 'mcp', status: 200, error_code: null, model: 'web_search:exa' });
    expect(rows[0].lane).to.be.a('string');
    expect(rows[1]).to.deep.include({ api_key_id: s.keyId, dialect: 'mcp', model: 'web_search' });
    expect(rows[1].status).to.be.at.least(400);
    expect(rows[1].error_code).to.be.a('string').and.not.equal('');
    for (const r of rows) metadataOnly(r);
    // the HTTP exchange that carried a call has no row of its own; the SDK's others (initialize, …) have one each, status as answered
    const exchanges = new Set(rows.map((r) => String(r.request_id).replace(/-\d+$/, '')));
    const others = all.filter((r) => !rows.includes(r));
    expect(others.filter((r) => exchanges.has(String(r.request_id))), 'no row for a tools/call exchange').to.have.length(0);
    expect(others.length, 'initialize and the rest').to.be.at.least(1);
    expect(others.some((r) => r.status === 200 && r.error_code === null && Number(r.input_tokens) === 0)).to.equal(true);
  });
});
