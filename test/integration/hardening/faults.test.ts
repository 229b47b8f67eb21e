import { expect } from 'chai';
import type { ChildProcess } from 'child_process';
import { Redis } from 'ioredis';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { expectErrorEnvelope } from '../../helpers/errors';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { leasesFreed } from '../../helpers/leases';
import { kill, ownRedis, spawnWeb, spawnWorker, tcpProxy } from '../../helpers/processes';
import { childChatWorker } from '../../helpers/child-worker';
import { parseSse } from '../../helpers/sse-events';
import { UsageEvent } from '../../../shared/db/models';
import { config } from '../../../shared/config/env';

const chatBody = { model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }] };
const chat = (base: string, key: string): Promise<Reply> => call('POST', '/v1/chat/completions', { base, headers: keyHeader(key), json: chatBody });

/** A request that fails must answer quickly, in the envelope, retryable. */
function expectUnavailable(r: Reply): void {
  expect(r.status, r.text).to.equal(503);
  expectErrorEnvelope(r.text, 'service_unavailable');
  expect(Number(r.headers.get('retry-after'))).to.be.at.least(1);
}

/** Collects a child's stderr (piped) as text. */
function stderrOf(child: ChildProcess): () => string {
  let text = '';
  child.stderr?.on('data', (d) => (text += String(d)));
  return () => text;
}

/** Nothing billed for the request, and the org's chat leases back to zero. */
async function nothingBilledLeasesZero(orgId: string, requestId: string | null): Promise<void> {
  expect(requestId, 'request id header').to.match(/^req_/);
  await usageSettled();
  expect(await UsageEvent.count({ where: { requestId: requestId! } }), 'nothing billed').to.equal(0);
  const freed = await leasesFreed(env().gw.ctx.leases, orgId, 'chat', 'interactive', 3000);
  expect(freed, 'leases back to zero').to.equal(true);
}

/** The requests' fate keys (keys.usageFate: set by the worker when it publishes, or by the pod when it gives up). */
async function fateKeys(): Promise<Set<string>> {
  const found = new Set<string>();
  let cursor = '0';
  do {
    const [next, batch] = await env().redis.scan(cursor, 'MATCH', `${config().redisPrefix}:{usage*}:fate:*`, 'COUNT', 1000);
    cursor = next;
    for (const k of batch) found.add(k);
  } while (cursor !== '0');
  return found;
}

/**
 * The fault suite: separate processes (web pods and workers from dist/, an own redis-server, a TCP
 * proxy in front of Postgres) are killed, restarted and cut, and the upstream misbehaves through the
 * simulator's knobs. Asserted every time: no hung client, every error a JSON envelope (or a clean
 * SSE error event), usage exactly once and only for delivered answers, leases back to zero,
 * processes serving again.
 */
describe('fault suite: processes killed, Redis restarted, Postgres cut', function () {
  this.timeout(60_000);
  const children: ChildProcess[] = [];
  beforeEach(resetSim);
  afterEach(async () => {
    for (const c of children.splice(0)) await kill(c);
  });

  it('web pod kill -9 mid-job: the client is not left hanging, the undelivered answer is not billed, another pod serves', async () => {
    const o = await buildOrg(env().redis);
    // The pod renews its leases every LEASE_TTL_MS / 3 while it lives; 2 s (not the run's 5 s): its dead lease expires sooner.
    const web = await spawnWeb({ LEASE_TTL_MS: '2000' });
    children.push(web.child);
    env().sim.knobs.set('sim-chat-1', { delayMs: 1500 });
    const fatesBefore = await fateKeys();
    const started = Date.now();
    const inFlight = chat(web.url, o.key).then(
      (r) => ({ ok: true as const, r }),
      (err: Error) => ({ ok: false as const, err }),
    );
    expect(await waitFor(() => env().sim.log.entries.length === 1, 5000), 'the job is upstream').to.equal(true);
    await kill(web.child);
    const outcome = await inFlight;
    expect(outcome.ok, 'the connection was cut, not answered').to.equal(false);
    expect(Date.now() - started).to.be.below(5000);

    // The worker finishes the upstream call and publishes to no one: its fate says delivered, its usage is held.
    const fate = await waitFor(async () => {
      const fresh = [...(await fateKeys())].filter((k) => !fatesBefore.has(k));
      return fresh.length === 1 && (await env().redis.get(fresh[0])) === 'delivered' ? fresh[0] : undefined;
    }, 15_000, 50);
    expect(fate, "the worker settled the request's fate").to.be.a('string');
    expect(await env().redis.exists(fate!.replace(/:fate:(?=[^:]+$)/, ':held:')), 'its usage is held for a pod that never comes').to.equal(1);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'the dead pod delivered nothing: nothing billed').to.equal(0);

    env().sim.knobs.reset();
    const served = await chat(env().gw.url, o.key);
    expect(served.status, served.text).to.equal(200);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'the delivered answer, once').to.equal(1);
    const freed = await leasesFreed(env().gw.ctx.leases, o.org.id, 'chat', 'interactive', config().leaseTtlMs + 3000);
    expect(freed, "the dead pod's lease expired").to.equal(true);
  });

  it('Redis (AOF) killed and restarted: 503 service_unavailable with Retry-After meanwhile, then serving again; usage once per delivered answer; leases zero', async () => {
    const redis = await ownRedis();
    const direct = new Redis(redis.url, { maxRetriesPerRequest: 1, lazyConnect: true });
    direct.on('error', () => undefined);
    try {
      // LEASE_TTL_MS 2 s (not the run's 5 s): a release lost while Redis was away expires sooner
      const extra = { REDIS_URL: redis.url, REPLY_POLL_MS: '200', LEASE_TTL_MS: '2000' };
      // started side by side; each one that started is killed after the test, even when the other did not
      const [worker, web] = await Promise.all([
        spawnWorker('chat', extra, 'pipe').then((c) => (children.push(c), c)),
        spawnWeb(extra, 'pipe').then((w) => (children.push(w.child), w)),
      ]);
      const logs = [stderrOf(worker), stderrOf(web.child)];
      const o: TestOrg = await buildOrg(env().redis);
      let delivered = 0;
      const first = await chat(web.url, o.key);
      expect(first.status, first.text).to.equal(200);
      delivered++;

      await redis.stop();
      const t = Date.now();
      const during = await chat(web.url, o.key);
      expectUnavailable(during);
      expect(Date.now() - t, 'answered promptly').to.be.below(10_000);

      await redis.start();
      const back = await waitFor(async () => (await chat(web.url, o.key)).status === 200, 20_000, 100);
      expect(back, 'serving again after Redis returned').to.equal(true);
      delivered++;

      const billed = await waitFor(async () => (await UsageEvent.count({ where: { orgId: o.org.id } })) === delivered, 15_000, 50);
      expect(billed, `usage rows = ${delivered} delivered answers`).to.equal(true);
      await direct.connect();
      const leaseKey = `${config().redisPrefix}:lease:{${o.org.id}}:chat:interactive`;
      // live leases only (score = expiry): a release lost while Redis was away expires after LEASE_TTL_MS
      const live = async () => direct.zcount(leaseKey, Date.now(), '+inf');
      expect(await waitFor(async () => (await live()) === 0, config().leaseTtlMs + 3000, 50), 'leases back to zero').to.equal(true);
      // every connection has an error listener: no "[ioredis] Unhandled error event" per refused reconnect
      for (const log of logs) expect(log()).not.to.include('Unhandled error event');
    } finally {
      direct.disconnect();
      await redis.stop();
    }
  });

  it('Postgres unreachable for a while: a request that needs it is a 503 envelope, not a 500 or a hang; serving again once it is back', async () => {
    const dbUrl = new URL(config().databaseUrl);
    const proxy = await tcpProxy(dbUrl.hostname, Number(dbUrl.port || 5432));
    try {
      const viaProxy = new URL(config().databaseUrl);
      viaProxy.hostname = '127.0.0.1';
      viaProxy.port = String(proxy.port);
      const web = await spawnWeb({ DATABASE_URL: viaProxy.toString() });
      children.push(web.child);
      const warm = await buildOrg(env().redis);
      expect((await chat(web.url, warm.key)).status).to.equal(200);

      await proxy.cut();
      const cold = await buildOrg(env().redis); // a key this pod has never seen: authenticating it needs Postgres
      const t = Date.now();
      const during = await chat(web.url, cold.key);
      expectUnavailable(during);
      expect(Date.now() - t, 'answered promptly').to.be.below(15_000);

      await proxy.restore();
      const back = await waitFor(async () => (await chat(web.url, cold.key)).status === 200, 20_000, 100);
      expect(back, 'serving again after Postgres returned').to.equal(true);
      await usageSettled();
      expect(await UsageEvent.count({ where: { orgId: cold.org.id } }), 'only the delivered answer is billed').to.equal(1);
    } finally {
      await proxy.close();
    }
  });

  it('chat worker kill -9 mid-job: the job is retried or failed, the client gets an answer or a JSON error, usage exactly once, lease zero', async () => {
    const o = await buildOrg(env().redis);
    const worker = await childChatWorker(); // only this child process takes chat jobs
    try {
      env().sim.knobs.set('sim-chat-1', { delayMs: 1500 });
      const t = Date.now();
      const reply = chat(env().gw.url, o.key);
      expect(await waitFor(() => env().sim.log.entries.length === 1, 10_000), 'the job is upstream').to.equal(true);
      await kill(worker.child);
      env().sim.knobs.reset(); // the retry is answered at once: the delay only held the first attempt upstream for the kill
      await worker.restore(); // live in-process workers notice the stalled job
      const r = await reply;
      expect(Date.now() - t, 'no hang').to.be.below(45_000);
      const requestId = r.headers.get('x-service-request-id')!;
      await usageSettled();
      const billed = await UsageEvent.count({ where: { requestId } });
      if (r.status === 200) expect(billed, 'retried and delivered: billed once').to.equal(1);
      else {
        expectErrorEnvelope(r.text, 'worker_lost');
        expect(billed, 'failed: nothing billed').to.equal(0);
      }
      expect(await leasesFreed(env().gw.ctx.leases, o.org.id, 'chat', 'interactive', 3000), 'lease zero').to.equal(true);
    } finally {
      await worker.restore();
    }
  });

  it('upstream 429 / 5xx / hang / mid-stream drop / malformed: JSON envelopes or a clean SSE error, nothing billed, leases zero, then serving', async () => {
    const deadlineMs = 2000;
    const web = await spawnWeb({ REQUEST_TIMEOUT_MS: String(deadlineMs) });
    children.push(web.child);
    const o = await buildOrg(env().redis);
    const send = (stream = false) => call('POST', '/v1/chat/completions', { base: web.url, headers: keyHeader(o.key), json: { ...chatBody, stream } });
    const cases: Array<{ knob: Record<string, unknown>; status: number; code: string; stream?: boolean }> = [
      { knob: { status: 429, retryAfter: 0 }, status: 429, code: 'upstream_rate_limited' },
      { knob: { status: 500 }, status: 502, code: 'upstream_error' },
      { knob: { status: 503, retryAfter: 0 }, status: 503, code: 'upstream_unavailable' },
      { knob: { hang: true }, status: 504, code: 'deadline_exceeded' },
      { knob: { hang: true }, status: 504, code: 'deadline_exceeded', stream: true },
      { knob: { malformed: true }, status: 502, code: 'upstream_error' },
    ];
    for (const c of cases) {
      env().sim.knobs.reset();
      env().sim.knobs.set('sim-chat-1', c.knob);
      const t = Date.now();
      const r = await send(c.stream);
      const label = `${JSON.stringify(c.knob)}${c.stream ? ' streamed' : ''}`;
      expect(Date.now() - t, `${label}: no hang`).to.be.below(deadlineMs + 8000);
      expect(r.status, `${label}: ${r.text}`).to.equal(c.status);
      expectErrorEnvelope(r.text, c.code);
      await nothingBilledLeasesZero(o.org.id, r.headers.get('x-service-request-id'));
    }

    env().sim.knobs.reset();
    env().sim.knobs.set('sim-chat-1', { dropAfterChunks: 2 });
    const dropped = await send(true);
    expect(dropped.status).to.equal(200);
    const events = parseSse(dropped.text);
    expect(events.at(-1)?.data?.error?.code, dropped.text).to.equal('upstream_error');
    expect(dropped.text, 'no [DONE] after an error').not.to.include('[DONE]');
    expect(dropped.text).not.to.match(/\bat .+\.js:\d+/);
    await nothingBilledLeasesZero(o.org.id, dropped.headers.get('x-service-request-id'));

    env().sim.knobs.reset();
    const served = await send();
    expect(served.status, served.text).to.equal(200);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'only the delivered answer is billed').to.equal(1);
  });
});
