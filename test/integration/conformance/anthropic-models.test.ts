import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { expectAnthropic } from '../../helpers/conformance';
import { poolModel, rndId } from '../../helpers/pool-models';
import { upsertModel } from '../../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { Model } from '../../../shared/db/models';
import { kill, spawnWeb, tcpProxy } from '../../helpers/processes';
import { config } from '../../../shared/config/env';

/**
 * The messages-dialect model list (`GET /v1/models` with `anthropic-version`) as Anthropic's SDK
 * reads it: ModelInfo entries (test/fixtures/vendor/anthropic, written from @anthropic-ai/sdk 1.12's
 * models.d.ts) with the spec's fields beside them, paged by limit / after_id / before_id.
 */
describe("conformance: the messages-dialect model list against Anthropic's Models API", () => {
  let o: TestOrg;
  let h: Record<string, string>;
  let all: Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  before(async () => {
    o = await buildOrg(env().redis);
    h = { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' };
    all = (await call('GET', '/v1/models?limit=1000', { headers: h })).body.data;
  });

  it('answers ModelInfo pages and entries, with the spec fields beside the Anthropic ones', async () => {
    const page = await call('GET', '/v1/models?limit=1000', { headers: h });
    expectAnthropic('ModelInfosPage', page.body);
    expect(all.length).to.be.greaterThan(3);
    const one = await call('GET', '/v1/models/sim-claude', { headers: h });
    expectAnthropic('ModelInfo', one.body);
    const claude = one.body;
    expect(claude).to.include({ max_input_tokens: claude.context_window, max_tokens: claude.max_output_tokens });
    // the spec's boolean capabilities map stays, Anthropic's capability objects sit beside it
    expect(claude.capabilities).to.include({ chat: true, embeddings: false });
    expect(claude.capabilities.image_input).to.deep.equal({ supported: claude.capabilities.vision });
    expect(claude.capabilities.thinking.supported, 'native bypass: thinking goes upstream').to.equal(true);
    const embed = all.find((m) => m.id === 'sim-embed')!;
    expect(embed.capabilities.batch.supported, 'not a chat model').to.equal(false);
    const decide = all.find((m) => m.id === 'sim-decide');
    expect(decide, 'the spec lists decision models alongside chat models').to.not.equal(undefined);
  });

  it('pages with limit, after_id and before_id, as the SDK walks them', async () => {
    const first = await call('GET', '/v1/models?limit=2', { headers: h });
    expect(first.body.data.map((m: { id: string }) => m.id)).to.deep.equal(all.slice(0, 2).map((m) => m.id));
    expect(first.body).to.include({ has_more: true, first_id: all[0].id, last_id: all[1].id });
    const before = await call('GET', `/v1/models?limit=2&before_id=${encodeURIComponent(all[3].id)}`, { headers: h });
    expect(before.body.data.map((m: { id: string }) => m.id)).to.deep.equal([all[1].id, all[2].id]);
    expect(before.body.has_more).to.equal(true);
    const last = await call('GET', `/v1/models?after_id=${encodeURIComponent(all.at(-2)!.id)}`, { headers: h });
    expect(last.body).to.include({ has_more: false, first_id: all.at(-1)!.id });
    expect((await call('GET', '/v1/models', { headers: h })).body.data.length, 'default limit 20').to.equal(Math.min(20, all.length));

    const client = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
    const page = await client.models.list({ limit: 2 });
    expect(page.data).to.have.length(2);
    expect(page.has_more).to.equal(true);
    const seen: string[] = [];
    for await (const m of client.models.list({ limit: 3 })) seen.push(m.id);
    expect(seen).to.deep.equal(all.map((m) => m.id));
    const retrieved = await client.models.retrieve('sim-chat');
    expect(retrieved.capabilities!.image_input.supported).to.be.a('boolean');
  });

  it('filters by lifecycle as the SDK sends it (lifecycle[]=…): every model is active, so a list of other stages is empty; omitted lists the active ones', async () => {
    const client = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
    const ids = all.map((m) => m.id);
    for (const stages of [['retired'], ['deprecated'], ['deprecated', 'retired']] as const) {
      const page = await client.models.list({ lifecycle: [...stages] });
      expect(page.data, stages.join()).to.deep.equal([]);
      expect([page.has_more, page.first_id, page.last_id], stages.join()).to.deep.equal([false, null, null]);
      const raw = await call('GET', `/v1/models?${stages.map((l) => `lifecycle[]=${l}`).join('&')}`, { headers: h });
      expectAnthropic('ModelInfosPage', raw.body);
    }
    const walked: string[] = [];
    for await (const m of client.models.list({ limit: 2, lifecycle: ['active', 'retired'] })) walked.push(m.id);
    expect(walked, 'the SDK keeps the filter from page to page').to.deep.equal(ids);
    expect((await call('GET', '/v1/models?limit=1000&lifecycle=active', { headers: h })).body.data.map((m: { id: string }) => m.id), 'the plain form').to.deep.equal(ids);
    for (const q of ['lifecycle[]=bogus', 'lifecycle=Active', 'lifecycle[]=active&lifecycle[]=deprecated&lifecycle[]=retired&lifecycle[]=active']) {
      const r = await call('GET', `/v1/models?${q}`, { headers: h });
      // Anthropic's error object (type, message): the message names the field, as the messages dialect's do
      expect([r.status, r.body.error?.type], q).to.deep.equal([400, 'invalid_request_error']);
      expect(r.body.error.message, q).to.include('`lifecycle`');
    }
  });

  it('refuses a bad limit or an unknown cursor with 400', async () => {
    for (const q of ['limit=0', 'limit=1001', 'limit=two', 'after_id=nope', `after_id=${all[0].id}&before_id=${all[1].id}`]) {
      const r = await call('GET', `/v1/models?${q}`, { headers: h });
      expect(r.status, q).to.equal(400);
      expect(r.body.error.code).to.equal('invalid_request');
    }
    // given twice: was taken as not given (limit=1&limit=2 answered 20 models, after_id twice the first page)
    for (const [q, param] of [['limit=1&limit=2', 'limit'], [`after_id=${all[0].id}&after_id=${all[1].id}`, 'after_id'], [`before_id=${all[1].id}&before_id=${all[2].id}`, 'before_id']]) {
      const r = await call('GET', `/v1/models?${q}`, { headers: h });
      expect([r.status, r.body.error?.type], q).to.deep.equal([400, 'invalid_request_error']);
      expect(r.body.error.message, q).to.include(`\`${param}\``);
    }
  });

  it("lists the most recently released models first, as Anthropic's list does, and pages in that order", async () => {
    // a new model whose id sorts last: the list was in id order
    const id = `zz-newest-${rndId()}`;
    await upsertModel({ id, provider: 'simulator-anthropic', upstream: `claude-${rndId()}`, capabilities: { chat: true }, prices: { input_token: 1, output_token: 1 } });
    await bumpEpoch(env().redis);
    try {
      const listed: Array<{ id: string; created_at: string }> = (await call('GET', '/v1/models?limit=1000', { headers: h })).body.data;
      expect(listed[0].id, 'the newest first').to.equal(id);
      const times = listed.map((m) => Date.parse(m.created_at));
      expect(times, 'created_at never rises down the list').to.deep.equal([...times].sort((a, b) => b - a));
      const client = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
      const walked: string[] = [];
      for await (const m of client.models.list({ limit: 2 })) walked.push(m.id);
      expect(walked, 'the SDK walks the pages in that order').to.deep.equal(listed.map((m) => m.id));
      const openai = (await call('GET', '/v1/models', { headers: keyHeader(o.key) })).body.data.map((m: { id: string }) => m.id);
      expect(openai).to.include(id);
    } finally {
      await Model.update({ enabled: false }, { where: { publicId: id } });
      await bumpEpoch(env().redis);
    }
  });

  it("reports thinking (and code execution) as passed on only when the model and its fallbacks are all Anthropic-native, as the bypass and the hosted search loop decide", async () => {
    const claude = { name: 'claude', provider: 'simulator-anthropic', upstream: `claude-${rndId()}` };
    const alone = await poolModel([claude]);
    const withOpenAi = await poolModel([claude], { fallbacks: ['sim-chat'] });
    const entry = async (id: string) => (await call('GET', `/v1/models/${id}`, { headers: h })).body.capabilities;
    expect((await entry(alone)).thinking).to.deep.equal({ supported: true, types: { adaptive: { supported: true }, enabled: { supported: true } } });
    const translated = await entry(withOpenAi);
    expect(translated.thinking.supported, 'an OpenAI-kind fallback: the request is translated, thinking has no effect').to.equal(false);
    expect(translated.code_execution.supported).to.equal(false);
    const listed = (await call('GET', '/v1/models?limit=1000', { headers: h })).body.data.find((m: { id: string }) => m.id === withOpenAi);
    expect(listed.capabilities.thinking.supported).to.equal(false);
  });

  it("answers its errors with Anthropic's error types (an outage's 503 is overloaded_error, not OpenAI's server_error), through the SDK; without anthropic-version the OpenAI-shaped list keeps OpenAI's", async function () {
    this.timeout(60_000);
    // a web pod reaching Postgres through a proxy the test cuts: a key it has never seen cannot be authenticated
    const db = new URL(config().databaseUrl);
    const proxy = await tcpProxy(db.hostname, Number(db.port || 5432));
    const viaProxy = new URL(config().databaseUrl);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    const web = await spawnWeb({ DATABASE_URL: viaProxy.toString() });
    try {
      await proxy.cut();
      const cold = await buildOrg(env().redis);
      const client = new Anthropic({ apiKey: cold.key, baseURL: web.url, maxRetries: 0 });
      for (const attempt of [() => client.models.list(), () => client.models.retrieve('sim-claude')]) {
        const err = await attempt().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).to.be.instanceOf(Anthropic.APIError);
        const e = err as InstanceType<typeof Anthropic.APIError>;
        expect([e.status, e.type]).to.deep.equal([503, 'overloaded_error']);
      }
      const anthropic = await call('GET', '/v1/models', { base: web.url, headers: { ...keyHeader(cold.key), 'anthropic-version': '2023-06-01' } });
      expect(anthropic.status, anthropic.text).to.equal(503);
      expectAnthropic('ErrorObject', anthropic.body.error);
      expect(anthropic.body.error).to.include({ type: 'overloaded_error', code: 'service_unavailable' });
      expect(anthropic.body.error, "OpenAI's param is not Anthropic's").to.not.have.property('param');
      const openai = await call('GET', '/v1/models', { base: web.url, headers: keyHeader(cold.key) });
      expect(openai.status, openai.text).to.equal(503);
      expect(openai.body.error).to.include({ type: 'server_error', code: 'service_unavailable', param: null });
    } finally {
      await kill(web.child);
      await proxy.close();
    }
  });
});
