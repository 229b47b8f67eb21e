import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { waitFor } from '../../helpers/wait';
import { Model, Provider, UsageEvent } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { pools } from '../../helpers/pools';
import { childChatWorker } from '../../helpers/child-worker';
import { Job } from 'bullmq';
import { insertUsage } from '../../../shared/metering/usage';
import { appendUsage, outboxStats } from '../../../shared/metering/usage-outbox';
import { outboxDuring, usageSettled } from '../../helpers/usage';
import { leasesFreed } from '../../helpers/leases';
import { ScriptedUpstream } from '../../helpers/scripted-upstream';
import { expectErrorEnvelope } from '../../helpers/errors';

const body = (extra: Record<string, unknown> = {}) => ({ model: 'sim-chat', messages: [{ role: 'user', content: 'failure test' }], ...extra });
const chat = (key: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  call('POST', '/v1/chat/completions', { headers: { ...keyHeader(key), ...headers }, json: body(extra) });

describe('upstream failures, cancellation, dead workers and passthrough', () => {
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
  });

  it('retries a 503 once and records exactly one usage event', async () => {
    env().sim.knobs.set('sim-chat-1', { status: 503, statusTimes: 1, retryAfter: 0 });
    const { result: r, records } = await outboxDuring(() => chat(o.key));
    expect(r.status, r.text).to.equal(200);
    expect(env().sim.log.entries).to.have.length(2);
    const requestId = r.headers.get('x-service-request-id')!;
    const expected = {
      requestId, orgId: o.org.id, apiKeyId: o.keyId, model: 'sim-chat', modality: 'chat', lane: 'interactive',
      inputTokens: r.body.usage.prompt_tokens, outputTokens: r.body.usage.completion_tokens, passthrough: false,
    };
    const mine = records.filter((u) => u.requestId === requestId);
    expect(mine, 'one outbox entry for the request, not one per attempt').to.have.length(1);
    expect(mine[0]).to.deep.include(expected);
    expect(expected.outputTokens).to.be.above(0);
    await usageSettled();
    const rows = await UsageEvent.findAll({ where: { requestId } });
    expect(rows).to.have.length(1);
    expect(rows[0]).to.deep.include(expected);
  });

  it('honours an upstream 429 Retry-After, then answers 429 upstream_rate_limited when it persists', async () => {
    env().sim.knobs.set('sim-chat-1', { status: 429, statusTimes: 1, retryAfter: 1 });
    const t = Date.now();
    const ok = await chat(o.key);
    expect(ok.status).to.equal(200);
    expect(Date.now() - t).to.be.at.least(950);
    env().sim.knobs.set('sim-chat-1', { status: 429, retryAfter: 0 });
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    const r = await chat(o.key);
    expect(r.status).to.equal(429);
    expect(r.body.error.code).to.equal('upstream_rate_limited');
    expect(r.headers.get('retry-after')).to.equal('1'); // the upstream said 0: never less than a second
    expect(env().sim.log.entries.length).to.equal(2 + 3); // 1 retried success + 3 attempts
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
  });

  it('retries a 500 (a pool of one: the same upstream after a backoff) up to the attempt budget, then 502 upstream_error, billing nothing', async () => {
    env().sim.knobs.set('sim-chat-1', { status: 500 });
    const r = await chat(o.key);
    expect(r.status).to.equal(502);
    expect(r.body.error.code).to.equal('upstream_error');
    expect(env().sim.log.entries).to.have.length(3); // POOL_MAX_ATTEMPTS
    expect(r.headers.get('x-service-attempts')).to.equal('3');
    expect(r.headers.get('x-service-deployment')).to.equal('simulator');
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: r.headers.get('x-service-request-id')! } })).to.equal(0);
  });

  it("a 5xx body that is no API error (a stack trace, an HTML page) is not quoted to the caller: 502 upstream_error with the status only", async () => {
    const up = await ScriptedUpstream.start();
    try {
      const model = await up.model();
      const trace = 'TypeError: Cannot read properties of undefined\n    at handler (/srv/upstream/app.js:12:5)\n    at next (/srv/upstream/node_modules/router/index.js:280:10)';
      up.otherwise = () => ({ kind: 'json', status: 500, body: trace });
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages: [{ role: 'user', content: 'hi' }] } });
      expect(r.status, r.text).to.equal(502);
      expectErrorEnvelope(r.text, 'upstream_error');
      expect(r.body.error.message).to.equal('Upstream failed with status 500: status 500');
      expect(r.text).to.not.include('/srv/upstream');
      // an API error's own message is still passed on
      up.otherwise = () => ({ kind: 'json', status: 500, body: { error: { message: 'The server had an error while processing your request.' } } });
      const api = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages: [{ role: 'user', content: 'hi' }] } });
      expect(api.body.error.message).to.equal('Upstream failed with status 500: The server had an error while processing your request.');
    } finally {
      await up.close();
    }
  });

  it('an unreachable upstream is 503 upstream_unavailable naming the error code, never the upstream\'s address', async () => {
    const dead = await Provider.create({ name: `dead-${Date.now()}`, kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKeyEncrypted: null });
    await Model.create({ publicId: 'test-chat-dead', providerId: dead.id, upstreamName: 'w', displayName: null, capabilities: { chat: true }, contextWindow: 8_000, maxOutputTokens: 1_000, config: {} });
    await bumpEpoch(env().redis);
    try {
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'test-chat-dead', messages: [{ role: 'user', content: 'hi' }] } });
      expect(r.status, r.text).to.equal(503);
      expect(r.body.error.code).to.equal('upstream_unavailable');
      expect(r.body.error.message).to.match(/ECONNREFUSED/);
      expect(r.text, 'the address').to.not.include('127.0.0.1');
    } finally {
      await Model.destroy({ where: { publicId: 'test-chat-dead' } });
      await dead.destroy();
      await bumpEpoch(env().redis);
    }
  });

  it('maps a malformed upstream body to 502, billing nothing', async () => {
    env().sim.knobs.set('sim-chat-1', { malformed: true });
    const r = await chat(o.key);
    expect(r.status).to.equal(502);
    expect(r.body.error.code).to.equal('upstream_error');
    expect(r.text).not.to.include('this is'); // the upstream's garbage is not quoted back
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: r.headers.get('x-service-request-id')! } })).to.equal(0);
  });

  it('reports an upstream that drops mid-stream as an in-band error event', async () => {
    env().sim.knobs.set('sim-chat-1', { dropAfterChunks: 3 });
    const res = await fetch(`${env().gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
      body: JSON.stringify(body({ stream: true })),
    });
    expect(res.status).to.equal(200);
    const events = (await res.text()).split('\n\n').filter(Boolean);
    expect(events.length).to.equal(4);
    expect(JSON.parse(events[3].slice(6)).error.code).to.equal('upstream_error');
    expect(events.join('')).not.to.include('[DONE]');
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: res.headers.get('x-service-request-id')! } }), 'a failed stream is not billed').to.equal(0);
    expect(await leasesFreed(env().gw.ctx.leases, o.org.id, 'chat', 'interactive')).to.equal(true);
  });

  it('aborts the upstream request and frees the lease when a streaming client disconnects', async () => {
    env().sim.knobs.set('sim-chat-1', { tokenDelayMs: 200, outputWords: 60 });
    const ac = new AbortController();
    const res = await fetch(`${env().gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
      body: JSON.stringify(body({ stream: true })),
      signal: ac.signal,
    });
    const reader = res.body!.getReader();
    await reader.read(); // the first event arrived
    ac.abort();
    const entry = env().sim.log.entries[0];
    expect(await waitFor(() => entry.aborted, 5000)).to.equal(true);
    expect(await leasesFreed(env().gw.ctx.leases, o.org.id, 'chat', 'interactive', 3000)).to.equal(true);
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: res.headers.get('x-service-request-id')! } }), 'a cancelled request is not billed').to.equal(0);
  });

  it('removes a waiting job when its client disconnects, and frees the lease', async () => {
    const workers = pools().workers;
    await Promise.all(workers.map((w) => w.pause()));
    try {
      const ac = new AbortController();
      const pending = fetch(`${env().gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
        body: JSON.stringify(body()),
        signal: ac.signal,
      }).catch((e: Error) => e);
      expect(await waitFor(async () => (await env().gw.ctx.leases.count(o.org.id, 'chat', 'interactive')) === 1, 3000), 'lease held').to.equal(true);
      // an org with nothing else in flight (within EXPRESS_MAX_IN_FLIGHT): the job is on the express queue (shared/queues/express.ts)
      const queue = env().gw.ctx.queues.get('chat-interactive-express');
      const waiting = await waitFor(async () => (await queue.getJobs(['prioritized', 'wait'])).find((j) => j.data.orgId === o.org.id), 3000);
      expect(waiting, 'job queued').to.not.equal(undefined);
      ac.abort();
      expect(await pending, 'the client saw its own abort').to.be.instanceOf(Error);
      expect(await waitFor(async () => (await Job.fromId(queue, waiting!.id!)) === undefined, 3000)).to.equal(true);
      expect(await leasesFreed(env().gw.ctx.leases, o.org.id, 'chat', 'interactive', 3000)).to.equal(true);
    } finally {
      workers.forEach((w) => w.resume());
    }
    expect(env().sim.log.entries).to.have.length(0);
  });

  it('answers an error and frees the lease when the worker running the job dies', async function () {
    this.timeout(40_000);
    const worker = await childChatWorker(); // only this child process takes jobs
    const child = worker.child;
    try {
      env().sim.knobs.set('sim-chat-1', { hang: true });
      const reply = chat(o.key);
      expect(await waitFor(() => env().sim.log.entries.length === 1, 10_000)).to.equal(true);
      child.kill('SIGKILL');
      await worker.restore(); // a live worker notices the stalled job
      const r = await reply;
      expect(r.status).to.equal(502);
      expect(r.body.error.code).to.equal('worker_lost');
      expect(await leasesFreed(env().gw.ctx.leases, o.org.id, 'chat', 'interactive')).to.equal(true);
      await usageSettled();
      expect(await UsageEvent.count({ where: { requestId: r.headers.get('x-service-request-id')! } })).to.equal(0);
    } finally {
      await worker.restore();
    }
  });

  it('sends a passthrough caller’s own key to the upstream and marks its usage as passthrough', async () => {
    const r = await chat(o.key, {}, { authorization: 'Bearer sk-caller-own-key' });
    expect(r.status, r.text).to.equal(200);
    expect(env().sim.log.entries[0].authorization).to.equal('Bearer sk-caller-own-key');
    await usageSettled();
    const ev = await UsageEvent.findOne({ where: { requestId: r.headers.get('x-service-request-id')! } });
    expect(ev!.passthrough).to.equal(true);
    expect(ev!.orgId).to.equal(o.org.id);
    const plain = await chat(o.key);
    expect(env().sim.log.entries[1].authorization).to.equal(undefined);
    await usageSettled();
    expect((await UsageEvent.findOne({ where: { requestId: plain.headers.get('x-service-request-id')! } }))!.passthrough).to.equal(false);
  });

  it('passthrough also takes the provider key as x-api-key, on legacy completions too, with the gateway key in the path', async () => {
    const viaHeader = await chat(o.key, {}, { 'x-api-key': 'sk-own-in-x-api-key' });
    expect(viaHeader.status, viaHeader.text).to.equal(200);
    expect(env().sim.log.entries[0].authorization).to.equal('Bearer sk-own-in-x-api-key');
    const legacy = await call('POST', `/a/${o.key}/v1/completions`, { headers: { authorization: 'Bearer sk-own-legacy' }, json: { model: 'sim-chat', prompt: 'mine' } });
    expect(legacy.status, legacy.text).to.equal(200);
    expect(env().sim.log.entries[1].authorization).to.equal('Bearer sk-own-legacy');
    await usageSettled();
    for (const r of [viaHeader, legacy]) {
      const ev = await UsageEvent.findOne({ where: { requestId: r.headers.get('x-service-request-id')! } });
      expect(ev).to.deep.include({ orgId: o.org.id, apiKeyId: o.keyId, passthrough: true });
    }
  });

  it('the messages and responses dialects ignore a non-svc_ key: the upstream gets the platform credential, usage is not passthrough', async () => {
    const V = { 'anthropic-version': '2023-06-01' };
    const m = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V, authorization: 'Bearer sk-ignored-1' }, json: { model: 'sim-chat', max_tokens: 20, messages: [{ role: 'user', content: 'x' }] } });
    expect(m.status, m.text).to.equal(200);
    const r = await call('POST', '/v1/responses', { headers: { ...keyHeader(o.key), 'x-api-key': 'sk-ignored-2' }, json: { model: 'sim-chat', input: 'x' } });
    expect(r.status, r.text).to.equal(200);
    expect(env().sim.log.entries.map((e) => e.authorization)).to.deep.equal([undefined, undefined]);
    expect(JSON.stringify(env().sim.log.entries)).not.to.include('sk-ignored');
    await usageSettled();
    for (const x of [m, r]) {
      expect((await UsageEvent.findOne({ where: { requestId: x.headers.get('x-service-request-id')! } }))!.passthrough).to.equal(false);
    }
  });

  it('writes a usage event once even when the write is replayed', async () => {
    const u = { requestId: `req_replay_${Date.now()}`, orgId: o.org.id, projectId: null, apiKeyId: null, model: 'sim-chat', modality: 'chat', lane: 'interactive', inputTokens: 3, outputTokens: 4 };
    await insertUsage(u);
    await insertUsage(u);
    await appendUsage(env().redis, u); // and again through the outbox, twice
    await appendUsage(env().redis, u);
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: u.requestId } })).to.equal(1);
  });
});

describe('worker shutdown', () => {
  beforeEach(resetSim);

  it('drains the in-flight job on SIGTERM before the worker exits', async function () {
    this.timeout(40_000);
    const o = await buildOrg(env().redis);
    const worker = await childChatWorker();
    const child = worker.child;
    try {
      env().sim.knobs.set('sim-chat-1', { delayMs: 1500 });
      const reply = chat(o.key);
      expect(await waitFor(() => env().sim.log.entries.length === 1, 10_000)).to.equal(true);
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      const r = await reply;
      expect(r.status, r.text).to.equal(200);
      expect(await exited).to.equal(0);
      // no other drainer runs now: the child's drainer wrote the job's usage event before it exited
      expect((await outboxStats(env().redis)).entries).to.equal(0);
      expect(await UsageEvent.count({ where: { requestId: r.headers.get('x-service-request-id')! } })).to.equal(1);
    } finally {
      await worker.restore();
    }
  });
});
