import crypto from 'crypto';
import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { roomInMinute, waitFor } from '../../helpers/wait';
import { startSearchUpstream, useSearchProvider, type SearchUpstream } from '../../helpers/search-upstream';
import { createApiKey, updateKeyControls } from '../../../shared/tenancy/ops';
import { updateMemberLimits } from '../../../shared/tenancy/members';
import { buildWebMember } from '../../helpers/web-client';
import { reserveLimits, settleUsage } from '../../../shared/limits/limits';
import { minuteWindow } from '../../../shared/limits/period';
import { keys } from '../../../shared/redis/keys';
import type { UsageRecord } from '../../../shared/metering/usage';
import { decide, validBody } from '../systemone/helpers';
import { withSettings } from '../../helpers/settings';
import { UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';
import { poolModel, rndId, simDeployment } from '../../helpers/pool-models';
import { importCatalog } from '../../../shared/catalog/catalog-ops';

const V = { 'anthropic-version': '2023-06-01' };

/**
 * A key's `rpm` and `tpm` on every path that reaches them: one client request is one request
 * whatever it does inside (a native search's model turns), every request family counts (decisions),
 * every part of the input counts (an Anthropic system prompt passed through natively), and the
 * tokens a request adds at its end join the minute it ends in even when that minute has no count yet.
 */
describe('key rate limits on every path', () => {
  let up: SearchUpstream;
  before(async () => {
    up = await startSearchUpstream();
  });
  after(() => up.close());
  beforeEach(resetSim);

  it('a native web search with two model turns is one request for rpm', async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    await useSearchProvider(o.org.id, up, `limits-paths-${crypto.randomBytes(3).toString('hex')}`);
    await updateKeyControls(env().redis, o.keyId, { rpm: 1 });
    expect(await roomInMinute()).to.equal(true);
    const json = { model: 'sim-chat', max_tokens: 300, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'Please search for honey bees' }] };
    const r = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V }, json });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.content.some((b: { type: string }) => b.type === 'web_search_tool_result'), 'a search ran between two turns').to.equal(true);
    const again = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V }, json });
    expect(again.status, 'the second request of the minute').to.equal(429);
    expect(again.body.error.type).to.equal('rate_limit_error');
  });

  it('decision requests count toward rpm', async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis, { policies: { systemone: 'included' } });
    await updateKeyControls(env().redis, o.keyId, { rpm: 1 });
    expect(await roomInMinute()).to.equal(true);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await decide(o.key, validBody())).status);
    expect(statuses).to.deep.equal([200, 429, 429]);
  });

  it('an Anthropic system prompt passed through natively counts toward tpm', async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    await updateKeyControls(env().redis, o.keyId, { tpm: 60 });
    expect(await roomInMinute()).to.equal(true);
    const big = 'word '.repeat(400);
    const asSystem = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V }, json: { model: 'sim-claude', max_tokens: 5, system: big, messages: [{ role: 'user', content: 'hi' }] } });
    expect(asSystem.status, 'a 400-word system prompt does not fit in 60 tokens a minute').to.equal(429);
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
  });

  it('an image counts a fixed estimate and a PDF one by its size toward tpm and the budget, never its base64 text, and a media type hides no text', async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    // 300 KB of base64 is about 270,000 tokens as text; upstreams bill an image at most about 1,600
    await updateKeyControls(env().redis, o.keyId, { tpm: 20_000, budgetMicros: 100_000, budgetPeriod: 'day' });
    expect(await roomInMinute()).to.equal(true);
    const data = crypto.randomBytes(300_000).toString('base64');
    const image = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', max_tokens: 20, messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${data}` } }] }] } });
    expect(image.status, image.text.slice(0, 300)).to.equal(200);
    const native = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V }, json: { model: 'sim-claude', max_tokens: 20, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: data.slice(0, 80_000) } }, { type: 'text', text: 'summarise' }] }] } });
    expect(native.status, native.text.slice(0, 300)).to.equal(200);
    const asText = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', max_tokens: 20, messages: [{ role: 'user', content: data }] } });
    expect(asText.status, 'the same bytes as text still count as text').to.equal(429);
    expect(asText.body.error.code).to.equal('rate_limit_exceeded');
    // a media type added to text hides none of it: only an image's or document's payload is left out
    const words = 'word '.repeat(30_000);
    const disguised = [
      { model: 'sim-chat', max_tokens: 20, messages: [{ role: 'user', type: 'image_url', content: words }] },
      { model: 'sim-chat', max_tokens: 20, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' }, text: words }] }] },
    ];
    for (const json of disguised) {
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json });
      expect(r.status, r.text.slice(0, 200)).to.equal(429);
    }
    const context = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V }, json: { model: 'sim-claude', max_tokens: 20, messages: [{ role: 'user', content: [{ type: 'document', context: words, source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } }, { type: 'text', text: 'hi' }] }] } });
    expect(context.status, 'a document\'s context is text').to.equal(429);
  });

  it('images and documents by URL in a small request count their fixed estimate too (a URL is short, what the upstream bills is not)', async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    // 30 image URLs are under 3 KB of JSON, about 600 tokens as text; an upstream bills about 1,600 tokens each
    await updateKeyControls(env().redis, o.keyId, { tpm: 20_000 });
    expect(await roomInMinute()).to.equal(true);
    const images = Array.from({ length: 30 }, (_, i) => ({ type: 'image_url', image_url: { url: `https://example.com/${i}.png` } }));
    const chat = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'text', text: 'compare' }, ...images] }] } });
    expect([chat.status, chat.body.error?.code], '30 images are about 48,000 tokens').to.deep.equal([429, 'rate_limit_exceeded']);
    const documents = Array.from({ length: 13 }, (_, i) => ({ type: 'document', source: { type: 'url', url: `https://example.com/${i}.pdf` } }));
    const native = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V }, json: { model: 'sim-claude', max_tokens: 5, messages: [{ role: 'user', content: [...documents, { type: 'text', text: 'summarise' }] }] } });
    expect([native.status, native.body.error?.type], '13 documents are at least 20,800 tokens').to.deep.equal([429, 'rate_limit_error']);
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    // served by a deployment that passes the URL on (a vendor's API): one on loopback would get the image's bytes, fetched by the gateway (providers/inline-image-urls)
    const vendor = await poolModel([simDeployment('vendor', { inline_image_urls: false })]);
    const one = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: vendor, max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this' }, images[0]] }] } });
    expect(one.status, one.text.slice(0, 200)).to.equal(200);
    expect(Number(one.headers.get('x-ratelimit-remaining-tokens')), 'one image: its 1,600 tokens and the text').to.be.within(20_000 - 1_700, 20_000 - 1_600);
  });

  it("an image counts the model's limits.image_tokens when the catalog gives one (gpt-4o-mini bills up to 48,169 tokens an image), toward tpm and the budget", async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    // deployments that pass image URLs on (a vendor's API), as the example.com URL cannot be fetched here
    const plain = await poolModel([simDeployment('img', { inline_image_urls: false })]);
    const costly = await poolModel([simDeployment('img', { inline_image_urls: false })], { limits: { image_tokens: 48_169 } });
    await updateKeyControls(env().redis, o.keyId, { tpm: 40_000 });
    expect(await roomInMinute()).to.equal(true);
    const withImage = (model: string) => ({ model, max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] });
    const refused = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: withImage(costly) });
    expect([refused.status, refused.body.error?.code], 'one image of up to 48,169 tokens is past 40,000 a minute').to.deep.equal([429, 'rate_limit_exceeded']);
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    const served = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: withImage(plain) });
    expect(served.status, served.text.slice(0, 200)).to.equal(200);
    // the budget holds the same: 48,169 tokens at 1 µ$ is past a budget of $0.04
    await updateKeyControls(env().redis, o.keyId, { tpm: null, budgetMicros: 40_000, budgetPeriod: 'day' });
    const over = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: withImage(costly) });
    expect([over.status, over.body.error?.code]).to.deep.equal([402, 'budget_exceeded']);
    // and the catalog takes only a positive integer
    for (const image_tokens of [-1, 0, 1.5, 'many']) {
      const bad = await importCatalog(env().redis, { models: [{ id: `bad-${rndId()}`, provider: 'simulator', upstream: 'x', capabilities: { chat: true }, limits: { image_tokens } }] }).then(() => '', (e: Error) => e.message);
      expect(bad, String(image_tokens)).to.include('image_tokens');
    }
  });

  it('a budgeted request with a document by URL is held at the model\'s context window: the upstream reads the document, so only that bounds it', async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    // an Anthropic-shaped deployment that passes a document URL on (Anthropic's API: inline_image_urls
    // false; one the operator runs gets refused, providers/inline-image-urls): 200,000 tokens of context
    // at 1 µ$ each is $0.20 of input; a budget of $0.15 fits any request of a few words, not one the
    // upstream may read 200,000 tokens for
    const claude = await poolModel([{ name: 'claude', provider: 'simulator-anthropic', upstream: `claude-${rndId()}`, inline_image_urls: false }], { context_window: 200_000 });
    await updateKeyControls(env().redis, o.keyId, { budgetMicros: 150_000, budgetPeriod: 'day' });
    const doc = { type: 'document', source: { type: 'url', url: 'https://example.com/long.pdf' } };
    const byUrl = [
      ['/v1/messages', { model: claude, max_tokens: 20, messages: [{ role: 'user', content: [doc, { type: 'text', text: 'summarise' }] }] }],
      ['/v1/chat/completions', { model: claude, max_tokens: 20, messages: [{ role: 'user', content: [{ type: 'file', file: { filename: 'long.pdf', file_data: 'https://example.com/long.pdf' } }, { type: 'text', text: 'summarise' }] }] }],
      ['/v1/responses', { model: claude, max_output_tokens: 20, input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://example.com/long.pdf' }, { type: 'input_text', text: 'summarise' }] }] }],
    ] as const;
    for (const [path, json] of byUrl) {
      const r = await call('POST', path, { headers: { ...keyHeader(o.key), ...V }, json });
      expect(r.status, `${path} ${r.text.slice(0, 200)}`).to.equal(402);
      expect(JSON.stringify(r.body), path).to.include('budget_exceeded');
    }
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    // the same document inline is held by its size, and served
    const inline = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V }, json: { model: claude, max_tokens: 20, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' } }, { type: 'text', text: 'summarise' }] }] } });
    expect(inline.status, inline.text.slice(0, 200)).to.equal(200);
    // a budget with room for the context window serves the URL
    await updateKeyControls(env().redis, o.keyId, { budgetMicros: 1_000_000, budgetPeriod: 'day' });
    const served = await call('POST', byUrl[0][0], { headers: { ...keyHeader(o.key), ...V }, json: byUrl[0][1] });
    expect(served.status, served.text.slice(0, 200)).to.equal(200);
    // rates count the estimate, not the context window: a minute of 20,000 tokens serves it
    await updateKeyControls(env().redis, o.keyId, { tpm: 20_000, budgetMicros: 2_000_000, budgetPeriod: 'day' });
    expect(await roomInMinute()).to.equal(true);
    const rated = await call('POST', byUrl[0][0], { headers: { ...keyHeader(o.key), ...V }, json: byUrl[0][1] });
    expect(rated.status, rated.text.slice(0, 200)).to.equal(200);
  });

  it('an input not counted in time (a busy pod) is held to its byte size, never answered 500: over tpm 429, within it served', async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    await updateKeyControls(env().redis, o.keyId, { tpm: 20_000 });
    expect(await roomInMinute()).to.equal(true);
    // 400 KB of text goes to the tokenizer's threads; a 50 ms budget cannot count it, so its bytes stand in
    const big = crypto.randomBytes(300_000).toString('base64');
    await withSettings({ TOKEN_COUNT_TIMEOUT_MS: '50' }, async () => {
      const over = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', max_tokens: 20, messages: [{ role: 'user', content: big }] } });
      expect(over.status, over.text.slice(0, 300)).to.equal(429);
      expect(over.body.error.code).to.equal('rate_limit_exceeded');
      expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    });
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'nothing billed').to.equal(0);
    await updateKeyControls(env().redis, o.keyId, { tpm: 1_000_000 });
    await withSettings({ TOKEN_COUNT_TIMEOUT_MS: '50' }, async () => {
      const within = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', max_tokens: 20, messages: [{ role: 'user', content: crypto.randomBytes(40_000).toString('base64') }] } });
      expect(within.status, within.text.slice(0, 300)).to.equal(200);
    });
  });

  it('tokens a request adds as it ends join that minute even when the minute had no count yet', async () => {
    const o = await buildOrg(env().redis);
    const controls = { allowedModels: null, rpm: null, tpm: 1_000, budget: null, expiresAt: null };
    const requestId = `req_${crypto.randomBytes(8).toString('hex')}`;
    await reserveLimits(env().redis, { orgId: o.org.id, keyId: o.keyId, projectId: null, controls, projectBudget: null, requestId, inputTokens: 10, worstCaseMicros: 0, prices: {} });
    const counter = keys.limits(o.org.id, `tpm:${o.keyId}:${minuteWindow().id}`);
    await env().redis.del(counter); // the request ends in a minute of its own (no request began in it yet)
    const usage = { requestId, orgId: o.org.id, apiKeyId: o.keyId, inputTokens: 10, outputTokens: 120 } as UsageRecord;
    await settleUsage(env().redis, [usage]);
    expect(Number(await env().redis.get(counter)), 'the output tokens').to.equal(120);
    const ttl = await env().redis.pttl(counter);
    expect(ttl, 'the count lives to the end of its minute').to.be.within(1, 61_000);
  });

  it('a job says whether its pod reserved anything, and the drainer settles only what was reserved', async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    // an org with nothing else in flight (within EXPRESS_MAX_IN_FLIGHT): its job is on the express queue (shared/queues/express.ts)
    const queue = env().gw.ctx.queues.get('chat-interactive-express');
    const held = async (key: string) => {
      const seen = env().sim.log.entries.length;
      env().sim.knobs.set('sim-chat-1', { hold: true });
      const pending = call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model: 'sim-chat', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] } });
      const job = await waitFor(async () => (await queue.getActive()).find((j) => j.data.orgId === o.org.id), 10_000);
      // A job is active before its worker has sent the upstream request, and a release lets go only the
      // requests held at that moment: release once the simulator holds it (else, on a busy machine, it
      // arrived after the release and waited for the next one, past the test's timeout).
      expect(await waitFor(() => env().sim.log.entries.length > seen, 10_000), 'the upstream request reached the simulator').to.equal(true);
      env().sim.knobs.release();
      expect((await pending).status).to.equal(200);
      env().sim.knobs.reset();
      return job!.data as { unreserved?: true };
    };
    expect((await held(o.key)).unreserved, 'a key without limits: nothing reserved').to.equal(true);
    await updateKeyControls(env().redis, o.keyId, { tpm: 100_000 });
    expect(await roomInMinute()).to.equal(true);
    expect((await held(o.key)).unreserved, 'a key with limits: its reservation is settled by the usage event').to.equal(undefined);

    // the drainer's side: a record marked unreserved is not looked up; an unmarked one (an older worker's) is
    const controls = { allowedModels: null, rpm: null, tpm: 1_000, budget: null, expiresAt: null };
    const [marked, unmarked] = [`req_${crypto.randomBytes(8).toString('hex')}`, `req_${crypto.randomBytes(8).toString('hex')}`];
    for (const requestId of [marked, unmarked]) {
      await reserveLimits(env().redis, { orgId: o.org.id, keyId: o.keyId, projectId: null, controls, projectBudget: null, requestId, inputTokens: 10, worstCaseMicros: 0, prices: {} });
    }
    const record = (requestId: string) => ({ requestId, orgId: o.org.id, apiKeyId: o.keyId, inputTokens: 10, outputTokens: 1 }) as UsageRecord;
    await settleUsage(env().redis, [{ ...record(marked), unreserved: true }, record(unmarked)]);
    const res = keys.limits(o.org.id, 'res');
    expect(await env().redis.hexists(res, marked), 'left to its own expiry').to.equal(1);
    expect(await env().redis.hexists(res, unmarked), 'settled').to.equal(0);
    await env().redis.hdel(res, marked);
    await env().redis.zrem(keys.limits(o.org.id, 'resx'), marked);
  });

  // the key's own rpm and tpm, and its member's (docs/keys.md "Member limits": the member's minute counts)
  for (const scope of ['key', 'member'] as const) {
    it(`requests its lane refused (never sent) give back their rpm and tpm counts (the ${scope}'s limits)`, async function () {
      this.timeout(30_000);
      const o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 1 } });
      let key = o.key;
      let counted = (unit: string, minute: number) => keys.limits(o.org.id, `${unit}:${o.keyId}:${minute}`);
      if (scope === 'key') await updateKeyControls(env().redis, o.keyId, { rpm: 3, tpm: 10_000 });
      else {
        const member = await buildWebMember(o.org.id, 'member');
        key = (await createApiKey(env().redis, { orgId: o.org.id, userId: member.id })).key;
        await updateMemberLimits(env().redis, o.org.id, member.id, { rpm: 3, tpm: 10_000 });
        counted = (unit, minute) => keys.limits(o.org.id, `m${unit}:${member.id}:${minute}`);
      }
      expect(await roomInMinute()).to.equal(true);
      const chat = () => call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model: 'sim-chat', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] } });
      env().sim.knobs.set('sim-chat-1', { hold: true });
      const first = chat();
      expect(await waitFor(() => env().sim.log.entries.length === 1, 10_000), 'the first holds the lane').to.equal(true);
      const minute = minuteWindow().id;
      const counts = async () => Promise.all(['rpm', 'tpm'].map(async (k) => Number(await env().redis.get(counted(k, minute)))));
      const [rpmBefore, tpmBefore] = await counts();
      expect(rpmBefore, 'the first is counted').to.equal(1);
      const refused = [await chat(), await chat(), await chat()];
      expect(refused.map((r) => r.body.error.code)).to.deep.equal(Array(3).fill('CONCURRENT_REQUEST_LIMIT_EXCEEDED'));
      expect(await waitFor(async () => (await counts())[0] === rpmBefore, 2_000), 'the refusals left no count').to.equal(true);
      expect((await counts())[1], 'nor tokens').to.equal(tpmBefore);
      env().sim.knobs.release();
      expect((await first).status).to.equal(200);
      env().sim.knobs.reset();
      expect((await chat()).status, 'the second request served this minute (rpm 3)').to.equal(200);
    });
  }
});
