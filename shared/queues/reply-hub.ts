import { DeadlineTimer } from '../deadline-timer';
import { isCluster, type RedisClient } from '../redis/connection';
import { config } from '../config/env';
import { Job } from 'bullmq';
import { keys } from '../redis/keys';
import type { Queues } from './queues';
import type { QueueName } from './names';
import type { JobResult } from './payloads';
import type { ReplyMessage } from './reply-messages';
import type { WireError } from '../errors/ApiError';
import { logger } from '../logger';
import { readKeptResult } from './reply-store';
import type { UsageRecord } from '../metering/usage';
import { withRoute, type RouteMeta } from './route-meta';
import { InFlightMap } from '../in-flight-map';

export interface ReplyHandlers {
  /** Chunks in sequence order, each exactly once. */
  onChunk?(data: string): void;
  /**
   * `recovered`: read from the job's stored state rather than received on the channel. `usage`: a
   * batch line's usage record, carried with the answer (docs/batches.md).
   */
  onResult(result: unknown, recovered?: boolean, usage?: UsageRecord): void;
  onError(err: WireError): void;
}

interface Pending {
  queue: QueueName;
  /** The BullMQ queue the job was added to (its shard or an express shard, express.ts); without it, the shard its id picks. */
  bullQueue?: string;
  /** The request's reply channel: its kept answer lives in that channel's slot (reply-store.ts). */
  replyTo?: string;
  handlers: ReplyHandlers;
  nextSeq: number;
  /** Chunks that came ahead of one missing before them (made at the first such chunk, rare). */
  buffered?: Map<number, string>;
  /** Set when the final result arrived before every chunk did. */
  final?: { n: number; d: unknown; u?: UsageRecord };
  lastSeen: number;
  /** Sweeps in a row that found the job still queued or running (nothing lost): each doubles the wait before the next, up to QUIET_MAX_DOUBLINGS. */
  quiet: number;
  deadlineTimer?: DeadlineTimer;
  onDeadline?: () => void;
  recovering: boolean;
  /** The job's add has returned (`added`): before that, a job not found is not yet added, not lost. */
  added: boolean;
  /**
   * Past its deadline, while the pod decides whether it or the worker was first (`onDeadline`):
   * messages wait here, to be delivered on `resume` or dropped on `unregister`.
   */
  held?: ReplyMessage[];
  /** Where the job's router stood when the worker last reported it (route-report.ts): named by the answers given without the worker. */
  route?: RouteMeta;
}

/** How many times a request's sweep interval doubles while its job is found queued or running (ReplyHub.sweep). */
const QUIET_MAX_DOUBLINGS = 2;

/** A channel's epoch key outlives its pod by this much; a live pod renews it every EPOCH_TOUCH_MS. */
const EPOCH_TTL_MS = 24 * 3600_000;
const EPOCH_TOUCH_MS = 3600_000;

/** A stream whose chunks the pod missed while its subscription looked unbroken (no copy was kept). */
const STREAM_LOST: WireError = {
  status: 502,
  code: 'worker_lost',
  message: 'Part of the streamed answer was lost on its way from the worker.',
};

const WORKER_LOST: WireError = {
  status: 502,
  code: 'worker_lost',
  message: 'The worker handling this request stopped before it answered.',
};

/** Maps a BullMQ failedReason back to the error the worker meant. */
export function wireFromFailedReason(reason: string | undefined): WireError {
  if (reason?.startsWith('{')) {
    try {
      const w = JSON.parse(reason) as WireError;
      if (typeof w.status === 'number' && typeof w.code === 'string') return w;
    } catch {
      /* fall through */
    }
  }
  return WORKER_LOST;
}

/**
 * The pod side of request-reply: the pod has one sharded channel per usage outbox stream (each in
 * that stream's slot, so a worker can add the usage event and publish the result in one script) and
 * hands them out to its requests in turn, which spreads reply traffic over the cluster's shards. Jobs
 * publish chunks and a final result on their request's channel (SPUBLISH). Pub/sub drops messages
 * while reconnecting, so pending requests that have been quiet for `pollMs`, and all of them after a
 * reconnect, are recovered from BullMQ's job state.
 */
export class ReplyHub {
  /** This pod's reply channels; `channel` hands them out in turn. */
  readonly channels: readonly string[];
  private readonly channelSet: Set<string>;
  private turn = 0;
  /** Awaited replies: an InFlightMap, so an answered request is not kept alive by the map's old tables (in-flight-map.ts). */
  private pending = new InFlightMap<Pending>();
  private timer: NodeJS.Timeout | undefined;
  private epochTimer: NodeJS.Timeout | undefined;
  private everReady = false;
  /** Each channel's subscription epoch (reply-store.ts); none while the subscriber is away. */
  private readonly epochs = new Map<string, string>();

  constructor(
    private readonly sub: RedisClient,
    private readonly queues: Queues,
    podId: string,
    private readonly pollMs: number,
    /** A command connection: recovery reads a request's kept answer with it (reply-store.ts). */
    private readonly redis: RedisClient,
  ) {
    this.channels = Array.from({ length: config().usageOutboxStreams }, (_, i) => keys.replyChannel(podId, i));
    this.channelSet = new Set(this.channels);
  }

  /** The reply channel for the next request (round robin over the pod's channels). */
  get channel(): string {
    const ch = this.channels[this.turn];
    this.turn = (this.turn + 1) % this.channels.length;
    return ch;
  }

  /**
   * The reply channel of request `requestId` on this pod, the same at every call (a hash of the id
   * over the pod's channels): its job's `replyTo`, so that whoever settles the request afterwards
   * (a route whose client left) reads its usage fate and kept answer where the worker wrote them.
   */
  channelFor(requestId: string): string {
    if (this.channels.length === 1) return this.channels[0];
    let h = 0x811c9dc5; // FNV-1a
    for (let i = 0; i < requestId.length; i++) h = Math.imul(h ^ requestId.charCodeAt(i), 0x01000193);
    return this.channels[(h >>> 0) % this.channels.length];
  }

  async start(): Promise<void> {
    this.sub.on('smessage', (channel: string, raw: string) => {
      if (this.channelSet.has(channel)) this.onMessage(raw);
    });
    // The subscriber went away: messages are lost until it listens again, so the channels' epochs
    // are raised now, on the command connection, before it resubscribes (reply-store.ts: the chunks
    // of streams in flight are then kept), and again once it is back, in case Redis was away too.
    const away = () => {
      if (!this.everReady) return;
      this.epochs.clear();
      void this.raiseEpochs().catch(() => undefined);
    };
    const back = () => {
      if (this.everReady) {
        void this.raiseEpochs().catch((err) => logger.warn({ err }, 'reply epoch raise failed'));
        for (const id of this.pending.keys()) void this.recover(id);
      }
      this.everReady = true;
    };
    this.sub.on('close', away);
    this.sub.on('ready', back);
    // On a cluster each shard has a subscriber connection of its own, which ioredis replaces on its
    // own: it tells only by `-node` (one ended) and `subscribersReady` (all resubscribed).
    if (isCluster(this.sub)) {
      this.sub.on('-node', away);
      this.sub.on('subscribersReady', back);
    }
    // without epochs (Redis refused the INCR) jobs carry none and their chunks are kept: safe, dearer
    await this.raiseEpochs().catch((err) => logger.warn({ err }, 'reply epoch raise failed'));
    await Promise.all(this.channels.map((ch) => this.sub.ssubscribe(ch)));
    this.everReady = true;
    this.timer = setInterval(() => this.sweep(), Math.max(50, Math.floor(this.pollMs / 2)));
    this.timer.unref();
    this.epochTimer = setInterval(() => void this.touchEpochs().catch(() => undefined), EPOCH_TOUCH_MS);
    this.epochTimer.unref();
  }

  /**
   * The channel's subscription epoch now, for a job added on it (`replyEpoch`); undefined while the
   * subscriber is away, so the worker keeps that job's chunks.
   */
  epochOf(channel: string): string | undefined {
    return this.epochs.get(channel);
  }

  /** Raises every channel's epoch (a new value no job added before carries). */
  private async raiseEpochs(): Promise<void> {
    await Promise.all(
      this.channels.map(async (ch) => {
        const key = keys.replyEpoch(ch);
        const [[, value]] = (await this.redis.multi().incr(key).pexpire(key, EPOCH_TTL_MS).exec()) as [[null, number], unknown];
        this.epochs.set(ch, String(value));
      }),
    );
  }

  /** Keeps a long-lived pod's epoch keys from expiring (an expired key only means chunks are kept). */
  private async touchEpochs(): Promise<void> {
    await Promise.all(this.channels.map((ch) => this.redis.pexpire(keys.replyEpoch(ch), EPOCH_TTL_MS)));
  }

  /**
   * Register before the job is added so no message can arrive unclaimed. A job id already awaited is
   * refused (throws): taking it over would leave the first waiter with no answer and no deadline.
   */
  register(jobId: string, queue: QueueName, handlers: ReplyHandlers, deadline: number, onDeadline: () => void, replyTo?: string, bullQueue?: string): void {
    if (this.pending.has(jobId)) throw new Error(`job ${jobId} is already awaited on this pod`);
    const p: Pending = { queue, bullQueue, replyTo, handlers, nextSeq: 0, lastSeen: Date.now(), quiet: 0, recovering: false, onDeadline, added: false };
    this.armDeadline(jobId, p, deadline);
    this.pending.set(jobId, p);
  }

  /**
   * The job of a registered request is in its queue (its add returned). Until then recovery reads a
   * missing job as not yet added (an add slower than `pollMs` under load), not as a lost worker.
   */
  added(jobId: string): void {
    const p = this.pending.get(jobId);
    if (p) p.added = true;
  }

  /** Forget a request (client gone, answered elsewhere). */
  unregister(jobId: string): void {
    const p = this.pending.get(jobId);
    p?.deadlineTimer?.clear();
    this.pending.delete(jobId);
  }

  get size(): number {
    return this.pending.size;
  }

  private onMessage(raw: string): void {
    let msg: ReplyMessage;
    try {
      msg = JSON.parse(raw) as ReplyMessage;
    } catch {
      return;
    }
    const p = this.pending.get(msg.i);
    if (!p) return;
    if (msg.t === 'm') {
      // kept at once, also while the deadline is being decided: the pod's own 504 names it
      p.route = msg.d;
      p.lastSeen = Date.now();
    } else if (p.held) p.held.push(msg);
    else this.deliver(p, msg);
  }

  private deliver(p: Pending, msg: ReplyMessage): void {
    p.lastSeen = Date.now();
    p.quiet = 0;
    if (msg.t === 'c') this.acceptChunk(msg.i, p, msg.s, msg.d);
    else if (msg.t === 'b') this.acceptRun(msg.i, p, msg.s, msg.d);
    else if (msg.t === 'r') {
      // a stream's last chunks may come with its result (reply-publisher.ts): delivered first
      if (msg.h) this.acceptRun(msg.i, p, msg.h.s, msg.h.d);
      if (this.pending.get(msg.i) === p) this.acceptFinal(msg.i, p, msg.n, msg.d, msg.u);
    }
    else if (msg.t === 'e') this.finish(msg.i, p, () => p.handlers.onError(msg.d));
  }

  /** Chunks `first`, `first+1`, ... in order, while the request is still awaited. */
  private acceptRun(id: string, p: Pending, first: number, data: string[]): void {
    for (let k = 0; k < data.length && this.pending.get(id) === p; k++) this.acceptChunk(id, p, first + k, data[k]);
  }

  private acceptChunk(id: string, p: Pending, seq: number, data: string): void {
    if (seq < p.nextSeq) return; // duplicate (e.g. replayed during recovery)
    if (seq === p.nextSeq && !p.buffered?.size) {
      // in order, nothing held: delivered without a map (a map per stream churned on every chunk)
      p.nextSeq++;
      p.handlers.onChunk?.(data);
    } else {
      const buffered = (p.buffered ??= new Map());
      buffered.set(seq, data);
      while (buffered.has(p.nextSeq)) {
        const d = buffered.get(p.nextSeq)!;
        buffered.delete(p.nextSeq);
        p.nextSeq++;
        p.handlers.onChunk?.(d);
      }
    }
    if (p.final && p.nextSeq >= p.final.n) this.acceptFinal(id, p, p.final.n, p.final.d, p.final.u);
  }

  private acceptFinal(id: string, p: Pending, n: number, d: unknown, u?: UsageRecord): void {
    if (p.nextSeq < n) {
      p.final = { n, d, u };
      void this.recover(id); // some chunks went missing: read them from the job
      return;
    }
    this.finish(id, p, () => p.handlers.onResult(d, false, u));
  }

  private finish(id: string, p: Pending, deliver: () => void): void {
    if (this.pending.get(id) !== p) return;
    this.unregister(id);
    try {
      deliver();
    } catch (err) {
      logger.error({ err }, 'reply handler threw');
    }
  }

  /**
   * A failure read from Redis rather than received (a worker lost, a stream's chunks lost): it names
   * the route the worker last reported (route-report.ts), unless it carries the worker's own.
   */
  private fail(id: string, p: Pending, w: WireError): void {
    this.finish(id, p, () => p.handlers.onError(withRoute(w, p.route)));
  }

  /** Where the router of an awaited job stood when its worker last reported it (route-report.ts). */
  routeOf(jobId: string): RouteMeta | undefined {
    return this.pending.get(jobId)?.route;
  }

  /**
   * The request's deadline: `onDeadline` decides, while the request's messages are held, either to
   * give up (`unregister`) or, when the worker answered first, to `resume` where it stood (chunks
   * already delivered are not counted again). Without `onDeadline` the request is forgotten.
   */
  private expire(id: string): void {
    const p = this.pending.get(id);
    if (!p) return;
    const onDeadline = p.onDeadline;
    p.deadlineTimer = undefined;
    p.onDeadline = undefined;
    if (!onDeadline) return this.unregister(id);
    p.held = [];
    onDeadline();
  }

  /**
   * After a deadline the worker won (its answer was published first): the request goes on with a new
   * deadline, and the messages held meanwhile are delivered in order. False: no longer awaited.
   */
  resume(id: string, deadline: number, onDeadline: () => void): boolean {
    const p = this.pending.get(id);
    if (!p) return false;
    const held = p.held ?? [];
    p.held = undefined;
    p.onDeadline = onDeadline;
    p.lastSeen = Date.now();
    p.deadlineTimer?.clear();
    this.armDeadline(id, p, deadline);
    for (const msg of held) if (this.pending.get(id) === p) this.deliver(p, msg);
    return true;
  }

  /** The request's deadline timer (register, resume): `expire` at `deadline`. */
  private armDeadline(id: string, p: Pending, deadline: number): void {
    p.deadlineTimer = new DeadlineTimer(deadline, () => this.expire(id));
  }

  /**
   * Recovers the requests quiet for `pollMs`, or longer for those whose last sweeps found their job
   * still queued or running (`quiet`: 2, then 4 × pollMs): a job waits for a slot for seconds when an
   * organization floods its lanes, and polling each waiting job every `pollMs` cost the pod and Redis
   * more than the requests themselves (docs/benchmark.md, issue 29, twenty-first session). A lost
   * message is recovered at the latest 4 × pollMs after it was due.
   */
  private sweep(): void {
    const now = Date.now();
    for (const [id, p] of this.pending.entries()) {
      if (p.lastSeen < now - this.pollMs * (1 << Math.min(p.quiet, QUIET_MAX_DOUBLINGS)) && !p.held) void this.recover(id);
    }
  }

  /**
   * Completes a quiet request from what Redis holds. A job still waiting or running: nothing yet. A
   * failed one: its error. A completed one is removed at once, so the job is usually gone: the answer
   * the worker's publishing script kept (reply-store.ts) answers it, or for a job finished by an older
   * worker its return value; gone with no kept answer, the worker was lost (or the copy expired).
   */
  private async recover(id: string): Promise<void> {
    const p = this.pending.get(id);
    if (!p || p.recovering || p.held) return;
    p.recovering = true;
    try {
      const queue = p.bullQueue ? this.queues.get(p.bullQueue) : this.queues.forJob(p.queue, id);
      // the state alone first (one script): a job still queued or running has nothing to recover, and
      // reading it whole (its data, decoded) for that was most of a sweep's cost
      const state = await queue.getJobState(id);
      if (this.pending.get(id) !== p) return;
      p.lastSeen = Date.now();
      if (state !== 'failed' && state !== 'completed' && state !== 'unknown') {
        p.quiet++;
        return;
      }
      const job = state === 'unknown' ? undefined : await Job.fromId<{ replyTo?: string }, JobResult>(queue as never, id);
      if (this.pending.get(id) !== p) return;
      if (state === 'failed') return job ? this.fail(id, p, wireFromFailedReason(job.failedReason)) : undefined; // gone meanwhile: the next sweep reads it unknown
      const replyTo = p.replyTo ?? job?.data.replyTo;
      const kept = replyTo ? await readKeptResult(this.redis, replyTo, id) : undefined;
      if (this.pending.get(id) !== p) return;
      const rv = kept ?? (job?.returnvalue && 'result' in job.returnvalue ? job.returnvalue : undefined);
      // no answer kept: lost, unless the job is simply not added yet (its add has not returned: under load
      // an add can take longer than REPLY_POLL_MS)
      if (!rv) return job || p.added ? this.fail(id, p, WORKER_LOST) : undefined;
      this.deliverRecovered(id, p, rv);
    } catch (err) {
      logger.warn({ err, id }, 'reply recovery failed; will retry');
    } finally {
      p.recovering = false;
    }
  }

  /** Replays a recovered answer's chunks (those not yet delivered) and its result. */
  private deliverRecovered(id: string, p: Pending, rv: JobResult): void {
    p.lastSeen = Date.now();
    // the chunks the result message carried (kept with it): enough when only they were missed
    if (!rv.chunks && rv.tail && p.nextSeq >= rv.tail.s) this.acceptRun(id, p, rv.tail.s, rv.tail.d);
    if (this.pending.get(id) !== p) return;
    // kept without its chunks (the subscription looked unbroken to the worker) yet some are missing:
    // never a truncated stream delivered as complete
    if (!rv.chunks && (rv.chunkCount ?? 0) > p.nextSeq) return this.fail(id, p, STREAM_LOST);
    (rv.chunks ?? []).forEach((c, i) => this.acceptChunk(id, p, i, c));
    if (this.pending.get(id) === p) {
      p.final = undefined;
      this.finish(id, p, () => p.handlers.onResult(rv.result, true, rv.usage));
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.epochTimer) clearInterval(this.epochTimer);
    for (const id of this.pending.keys()) this.unregister(id);
    await Promise.all(this.channels.map((ch) => this.sub.sunsubscribe(ch).catch(() => undefined)));
  }
}
