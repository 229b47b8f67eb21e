import { expect } from 'chai';
import { Job } from 'bullmq';
import { env, resetSim, startGateway, type TestGateway } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { parseSse } from '../../helpers/sse-events';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';
import { keys } from '../../../shared/redis/keys';
import { createRedis } from '../../../shared/redis/connection';
import { ReplyPublisher } from '../../../shared/queues/reply-publisher';
import type { WireError } from '../../../shared/errors/ApiError';
import type { UsageRecord } from '../../../shared/metering/usage';
import { waitFor } from '../../helpers/wait';

/** A pod of the suite's own, and a fresh simulator and organization for each test. */
function podPerSuite(): { readonly pod: TestGateway; readonly org: TestOrg } {
  let pod: TestGateway;
  let org: TestOrg;
  before(async () => {
    pod = await startGateway();
  });
  after(async () => {
    await pod.close();
  });
  beforeEach(async () => {
    await resetSim();
    org = await buildOrg(env().redis);
  });
  return {
    get pod() {
      return pod;
    },
    get org() {
      return org;
    },
  };
}

/** The answer kept for request `id` on whichever of the pod's reply channels it was given. */
const keptCopy = async (pod: TestGateway, id: string) =>
  (await Promise.all(pod.ctx.replies.channels.map((ch) => env().redis.get(keys.replyResult(ch, id))))).find((k) => k !== null);

/**
 * A pod that misses the reply on pub/sub (its subscriber was away when the worker published)
 * answers from the copy the worker's publishing script kept (shared/queues/reply-store.ts), not from
 * the job's return value, which no longer holds the answer; the usage held for it is billed once.
 */
describe('reply recovery: a missed reply is answered from the kept result', () => {
  const s = podPerSuite();
  beforeEach(async () => {
    // the pod's subscriber stops hearing its reply channels: every reply is missed
    await s.pod.ctx.sub.sunsubscribe(...s.pod.ctx.replies.channels);
  });
  afterEach(async () => {
    await s.pod.ctx.sub.ssubscribe(...s.pod.ctx.replies.channels);
  });

  const job = (id: string) => Job.fromId(env().gw.ctx.queues.forJob('chat-interactive', id) as never, id);

  it('JSON chat: the job is removed on completion, the pod answers 200 from the kept copy, billed once', async () => {
    const r = await call('POST', '/v1/chat/completions', { base: s.pod.url, headers: keyHeader(s.org.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'recover me' }] } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.object).to.equal('chat.completion');
    expect(r.body.model).to.equal('sim-chat');
    expect(r.body.choices[0].message.content).to.be.a('string').and.not.equal('');
    const id = r.headers.get('x-service-request-id')!;
    expect(await job(id), 'the completed job is gone (removeOnComplete)').to.equal(undefined);
    expect(await keptCopy(s.pod, id), 'the kept copy holds the answer').to.include(r.body.choices[0].message.content);
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: id } }), 'the held usage billed once').to.equal(1);
  });

  it('streamed chat: every event and [DONE] from the kept chunks, billed once', async () => {
    const res = await fetch(`${s.pod.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...keyHeader(s.org.key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', stream: true, messages: [{ role: 'user', content: 'recover my stream' }] }),
    });
    const text = await res.text();
    expect(res.status, text).to.equal(200);
    const events = parseSse(text);
    expect(events[events.length - 1].data).to.equal('[DONE]');
    const chunks = events.slice(0, -1).map((e) => e.data);
    for (const c of chunks) expect(c.object).to.equal('chat.completion.chunk');
    const content = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    expect(content).to.not.equal('');
    expect(chunks.some((c) => c.choices[0]?.finish_reason === 'stop'), 'the last chunk is there').to.equal(true);
    const id = res.headers.get('x-service-request-id')!;
    expect(await job(id), 'the completed job is gone (removeOnComplete)').to.equal(undefined);
    expect(await keptCopy(s.pod, id), 'the kept copy holds the chunks').to.include('chat.completion.chunk');
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: id } }), 'the held usage billed once').to.equal(1);
  });
});

/**
 * A stream's chunks are kept only when its pod may have missed some (shared/queues/reply-store.ts):
 * a subscription that never lapsed keeps the final message alone; a lapse (the pod raises its
 * channels' epochs) or nobody listening keeps every chunk, and the pod replays what it missed.
 */
describe('reply recovery: a stream keeps its chunks only when its pod may have missed some', () => {
  const s = podPerSuite();

  const stream = async (content: string) => {
    const res = await fetch(`${s.pod.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...keyHeader(s.org.key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', stream: true, messages: [{ role: 'user', content }] }),
    });
    return { res, id: res.headers.get('x-service-request-id')! };
  };
  const complete = (text: string) => {
    const events = parseSse(text);
    expect(events[events.length - 1].data).to.equal('[DONE]');
    const chunks = events.slice(0, -1).map((e) => e.data);
    expect(chunks.some((c) => c.choices[0]?.finish_reason === 'stop'), 'the last chunk is there').to.equal(true);
    return chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
  };

  it('an unbroken subscription: the kept copy is the final message alone, with the chunk count', async () => {
    const { res, id } = await stream('keep nothing extra');
    expect(res.status).to.equal(200);
    complete(await res.text());
    const kept = JSON.parse((await keptCopy(s.pod, id))!);
    expect(kept.t, 'the final reply message itself').to.equal('r');
    expect(kept.n).to.be.greaterThan(2);
    expect(kept).to.not.have.property('c');
    // at most the last chunks the result message carried (reply-publisher.ts), never all of them
    if (kept.h) expect(kept.h.s, 'only a tail').to.be.greaterThan(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: id } })).to.equal(1);
  });

  it('the subscriber drops mid-stream: the chunks published meanwhile are replayed from the kept copy, billed once', async () => {
    await fetch(`${env().simUrl}/_sim/knobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tokenDelayMs: 40 }) });
    const before = await Promise.all(s.pod.ctx.replies.channels.map((ch) => env().redis.get(keys.replyEpoch(ch))));
    const { res, id } = await stream('drop my subscriber');
    expect(res.status).to.equal(200);
    const body = res.text();
    await new Promise((r) => setTimeout(r, 120)); // a few chunks in
    // the subscriber's socket dies (ioredis reconnects and resubscribes); chunks sent meanwhile are lost
    (s.pod.ctx.sub as unknown as { stream: import('net').Socket }).stream.destroy();
    const content = complete(await body);
    const direct = await (await fetch(`${env().simUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat-1', messages: [{ role: 'user', content: 'drop my subscriber' }] }),
    })).json() as { choices: Array<{ message: { content: string } }> };
    expect(content, 'every chunk, in order').to.equal(direct.choices[0].message.content);
    const after = await Promise.all(s.pod.ctx.replies.channels.map((ch) => env().redis.get(keys.replyEpoch(ch))));
    after.forEach((e, i) => expect(Number(e), 'the epoch was raised').to.be.greaterThan(Number(before[i])));
    expect(JSON.parse((await keptCopy(s.pod, id))!), 'the chunks were kept').to.have.property('c').that.is.an('array').with.length.greaterThan(2);
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: id } })).to.equal(1);
  });
});

/**
 * The publishing scripts' side (shared/queues/reply-publisher.ts), on a channel of its own: chunks
 * withheld under the current epoch with a listener are not kept; a moved epoch, or no listener,
 * keeps them. And a pod that did miss chunks of a stream kept without them answers an error, never a
 * truncated stream as complete.
 */
describe('reply store: withheld chunks', () => {
  const channel = keys.replyChannel(`withheld-${process.pid}`, 0);
  const listener = createRedis('subscriber');
  let publisher: ReplyPublisher;
  before(async () => {
    publisher = new ReplyPublisher(env().redis);
    await listener.ssubscribe(channel);
    await env().redis.set(keys.replyEpoch(channel), '7');
  });
  after(async () => {
    await env().redis.del(keys.replyEpoch(channel));
    listener.disconnect();
  });
  const kept = async (id: string) => JSON.parse((await env().redis.get(keys.replyResult(channel, id)))!);

  it('the same epoch and a listener: the final message alone is kept, and it is published', async () => {
    expect(await publisher.result(channel, 'w-1', 2, { ok: 1 }, undefined, ['a', 'b'], false, '7')).to.equal(1);
    expect(await kept('w-1')).to.deep.equal({ i: 'w-1', t: 'r', n: 2, d: { ok: 1 } });
  });

  it('a raised epoch: the chunks are kept', async () => {
    expect(await publisher.result(channel, 'w-2', 2, { ok: 1 }, undefined, ['a', 'b'], false, '6')).to.equal(1);
    expect((await kept('w-2')).c).to.deep.equal(['a', 'b']);
  });

  it('no epoch on the job (added while the subscriber was away, or by an older pod): the chunks are kept', async () => {
    await publisher.result(channel, 'w-3', 2, { ok: 1 }, undefined, ['a', 'b'], false, undefined);
    expect((await kept('w-3')).c).to.deep.equal(['a', 'b']);
  });

  it('nobody listens: the chunks are kept, with the usage held (not billed)', async () => {
    const nobody = keys.replyChannel(`withheld-none-${process.pid}`, 0);
    await env().redis.set(keys.replyEpoch(nobody), '7', 'PX', 60_000);
    const usage = { requestId: `w-4-${process.pid}`, orgId: 'o', modality: 'chat' } as unknown as UsageRecord;
    expect(await publisher.result(nobody, usage.requestId, 2, { ok: 1 }, usage, ['a', 'b'], false, '7')).to.equal(0);
    expect(JSON.parse((await env().redis.get(keys.replyResult(nobody, usage.requestId)))!).c).to.deep.equal(['a', 'b']);
    expect(await env().redis.get(keys.usageHeld(nobody, usage.requestId))).to.be.a('string');
    await env().redis.del(keys.usageHeld(nobody, usage.requestId), keys.usageFate(nobody, usage.requestId), keys.replyResult(nobody, usage.requestId), keys.replyEpoch(nobody));
  });

  it('a result carrying the last chunks: the pod delivers them in order, then the result; and recovers them from the kept copy when it missed that message', async () => {
    const pod = await startGateway();
    try {
      const ch = pod.ctx.replies.channels[0];
      const watch = (id: string) => {
        const seen: string[] = [];
        pod.ctx.replies.register(id, 'chat-interactive', { onChunk: (c) => seen.push(c), onResult: () => seen.push('result'), onError: (e) => seen.push(`error ${e.code}`) }, Date.now() + 10_000, () => undefined, ch);
        pod.ctx.replies.added(id);
        return seen;
      };
      const heard = watch('w-6');
      await env().redis.spublish(ch, JSON.stringify({ i: 'w-6', t: 'c', s: 0, d: 'first' }));
      await env().redis.spublish(ch, JSON.stringify({ i: 'w-6', t: 'r', n: 3, d: { ok: 1 }, h: { s: 1, d: ['second', 'third'] } }));
      await waitFor(() => heard.includes('result'));
      expect(heard).to.deep.equal(['first', 'second', 'third', 'result']);

      // the result message is missed (kept alone, with its tail, as for an unbroken subscription): recovered whole
      const missed = watch('w-7');
      await env().redis.spublish(ch, JSON.stringify({ i: 'w-7', t: 'c', s: 0, d: 'first' }));
      await env().redis.set(keys.replyResult(ch, 'w-7'), JSON.stringify({ i: 'w-7', t: 'r', n: 3, d: { ok: 1 }, h: { s: 1, d: ['second', 'third'] } }), 'PX', 30_000);
      expect(await waitFor(() => missed.includes('result'), 8_000), missed.join(', ')).to.equal(true);
      expect(missed).to.deep.equal(['first', 'second', 'third', 'result']);

      // missing a chunk before the tail is still a lost stream, never delivered truncated
      const gap = watch('w-8');
      await env().redis.set(keys.replyResult(ch, 'w-8'), JSON.stringify({ i: 'w-8', t: 'r', n: 3, d: { ok: 1 }, h: { s: 1, d: ['second', 'third'] } }), 'PX', 30_000);
      expect(await waitFor(() => gap.length > 0, 8_000)).to.equal(true);
      expect(gap).to.deep.equal(['error worker_lost']);
    } finally {
      await pod.close();
    }
  });

  it('a pod that missed chunks of a stream kept without them answers worker_lost', async () => {
    const pod = await startGateway();
    try {
      const ch = pod.ctx.replies.channels[0];
      const errors: WireError[] = [];
      const got: string[] = [];
      pod.ctx.replies.register('w-5', 'chat-interactive', { onChunk: (c) => got.push(c), onResult: () => errors.push({ status: 200, code: 'delivered', message: '' }), onError: (e) => errors.push(e) }, Date.now() + 10_000, () => undefined, ch);
      pod.ctx.replies.added('w-5');
      // chunk 0 arrives, chunks 1 and 2 are lost, then the result (kept alone, as for an unbroken subscription)
      await env().redis.spublish(ch, JSON.stringify({ i: 'w-5', t: 'c', s: 0, d: 'first' }));
      await publisher.result(ch, 'w-5', 3, { ok: 1 }, undefined, ['first', 'second', 'third'], false, pod.ctx.replies.epochOf(ch));
      await waitFor(() => errors.length > 0);
      expect(got).to.deep.equal(['first']);
      expect(errors[0].code).to.equal('worker_lost');
    } finally {
      await pod.close();
    }
  });
});

/**
 * The pod's sweep of quiet requests (ReplyHub.sweep): a job still queued or running is read by its
 * state alone, never whole, and each such finding doubles the wait before the next (up to 4 ×
 * REPLY_POLL_MS), so requests waiting seconds for a slot under a flood cost the pod and Redis little.
 */
describe('reply recovery: the sweep backs off while the job is queued or running', () => {
  const s = podPerSuite();

  it('a request held at the upstream is checked by state, with growing gaps, and answered when released', async function () {
    this.timeout(20_000);
    const pollMs = Number(process.env.REPLY_POLL_MS);
    const states: number[] = [];
    const wholeReads: string[] = [];
    const started = Date.now();
    const queueProto = Object.getPrototypeOf(s.pod.ctx.queues.forJob('chat-interactive', 'x')) as { getJobState(id: string): Promise<string> };
    const getJobState = queueProto.getJobState;
    const fromId = Job.fromId;
    let id = '';
    queueProto.getJobState = function (this: unknown, jobId: string) {
      if (jobId === id) states.push(Date.now() - started);
      return getJobState.call(this, jobId);
    };
    (Job as unknown as { fromId: typeof Job.fromId }).fromId = ((q: never, jobId: string) => {
      if (jobId === id) wholeReads.push(jobId);
      return fromId.call(Job, q, jobId);
    }) as typeof Job.fromId;
    try {
      env().sim.knobs.set('sim-chat-1', { hold: true });
      const answered = fetch(`${s.pod.url}/v1/chat/completions`, { method: 'POST', headers: { ...keyHeader(s.org.key), 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'held a while' }] }) });
      expect(await waitFor(() => env().sim.log.entries.length > 0, 10_000), 'it reached the upstream').to.equal(true);
      // the pod's one awaited reply is this request's
      id = [...(s.pod.ctx.replies as unknown as { pending: { keys(): Iterable<string> } }).pending.keys()][0];
      await new Promise((r) => setTimeout(r, 12 * pollMs));
      env().sim.knobs.release();
      const res = await answered;
      expect(res.status).to.equal(200);
      expect(wholeReads, 'never read whole while it ran').to.deep.equal([]);
      // every pollMs/2 without the backoff: about 12 checks; with it, gaps of 1, 2, 4, 4 … × pollMs
      expect(states.length, `checks at ${states.join(', ')} ms`).to.be.within(2, 5);
      const gaps = states.slice(1).map((t, i) => t - states[i]);
      expect(gaps.every((g) => g >= 1.5 * pollMs), `gaps ${gaps.join(', ')} ms`).to.equal(true);
    } finally {
      queueProto.getJobState = getJobState;
      (Job as unknown as { fromId: typeof Job.fromId }).fromId = fromId;
      env().sim.knobs.reset();
      env().sim.knobs.release();
    }
  });
});
