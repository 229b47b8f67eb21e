import type { RedisClient } from '../redis/connection';
import type { ReplyMessage } from './reply-messages';
import type { WireError } from '../errors/ApiError';
import type { UsageRecord } from '../metering/usage';
import type { RouteMeta } from './route-meta';
import { publishWithUsage } from '../metering/usage-outbox';
import { TurnBatch } from '../redis/turn-batch';
import { writeNow } from '../redis/cork';
import { keepOf, publishResult, WITHHELD } from './reply-store';

/**
 * Up to this many jobs running in the process, a stream's first message is written at once instead of
 * at the end of its turn (shared/redis/cork.ts); above it the turn's commands leave together. Jobs
 * running, not streams open: a stream whose upstream sends it in one read (a short answer, a fast
 * upstream) opens and ends in one turn, so under load few streams are ever open at once, and every
 * first message was written on its own (a write a stream; docs/benchmark.md, *eleventh session*).
 */
const WRITE_NOW_MAX_RUNNING = 4;

/** Chunks of one request produced in the current event-loop turn, not yet published. */
interface Batch {
  channel: string;
  first: number;
  data: string[];
  done: Promise<unknown>;
  resolve: (v: unknown) => void;
}

/**
 * The worker side of request-reply. A stream's first chunk is published before the event loop turns
 * (time to first token), together with the chunks emitted in the same synchronous run (the route
 * metadata that precedes it, the rest of the first upstream read); the chunks a request produces
 * later in the same event-loop turn (events that came in one upstream read) go out as one message,
 * and the messages of every job of the process in that turn in one write (turn-batch.ts). A result carries its own
 * request's held chunks in its message (`h`); anything else published after them (an error, another
 * request's result) first sends what is held, so the pod sees every message in sequence order.
 */
export class ReplyPublisher {
  private readonly chunks: TurnBatch;
  private batches = new Map<string, Batch>();
  /**
   * `running`: the jobs running in the process now (the worker's cancel tracker, workers/runtime.ts);
   * without it (a publisher of its own, in tests) the process counts as lightly loaded.
   */
  constructor(
    private readonly redis: RedisClient,
    private readonly running: () => number = () => 0,
  ) {
    this.chunks = new TurnBatch(redis);
  }

  private send(channel: string, msg: ReplyMessage): Promise<unknown> {
    this.flush();
    return this.redis.spublish(channel, JSON.stringify(msg));
  }

  /**
   * Publishes the held chunks: one message per request, issued together. `now`: a stream's
   * first message is among them, and it leaves at once rather than when the turn ends (the
   * connection's cork, shared/redis/cork.ts): time to first token.
   */
  private flush(now = false): void {
    if (this.batches.size === 0) return;
    const batches = this.batches;
    this.batches = new Map();
    for (const [id, b] of batches) {
      const msg: ReplyMessage = b.data.length === 1 ? { i: id, t: 'c', s: b.first, d: b.data[0] } : { i: id, t: 'b', s: b.first, d: b.data };
      const text = JSON.stringify(msg);
      b.resolve(this.chunks.send((r) => r.spublish(b.channel, text)));
    }
    this.chunks.flush();
    if (now) writeNow(this.redis);
  }

  chunk(channel: string, id: string, seq: number, data: string): Promise<unknown> {
    let b = this.batches.get(id);
    if (b && b.first + b.data.length !== seq) {
      this.flush(); // not the next in order (never expected): what is held goes first
      b = undefined;
    }
    if (!b) {
      let resolve!: (v: unknown) => void;
      const done = new Promise<unknown>((r) => (resolve = r));
      b = { channel, first: seq, data: [], done, resolve };
      // A stream's first message leaves before the event loop turns (time to first token), with
      // every chunk emitted in the same synchronous run: a pool's route metadata and the first
      // upstream read's events are one message, not a message and then another a turn later.
      // Written at once while few jobs run here (time to first token at low load); under load it
      // waits for the turn's end with the other jobs' commands (fewer writes: throughput).
      if (seq === 0) {
        const now = this.running() <= WRITE_NOW_MAX_RUNNING;
        queueMicrotask(() => this.flush(now));
      }
      else if (this.batches.size === 0) setImmediate(() => this.flush());
      this.batches.set(id, b);
    }
    b.data.push(data);
    return b.done;
  }

  /**
   * The final result, kept in Redis for a pod that misses it (reply-store.ts; a stream's `chunks`
   * with it only when the pod may have missed some: with `epoch`, the channel's epoch the job was
   * added under, they are withheld first and sent only if the script asks for them). With `usage`,
   * the request's usage event goes into the outbox in the same script (one round trip): the result
   * is published only if the event was stored. With `carry` (a batch line), the usage instead
   * travels in the message and the kept answer, to the batch runner, which bills it in the same
   * Postgres transaction that records the line (docs/batches.md): a line is billed exactly when its
   * answer is recorded, whatever happens to Redis in between.
   */
  async result(channel: string, id: string, chunkCount: number, data: unknown, usage?: UsageRecord, chunks?: string[], carry = false, epoch?: string, withTail = true): Promise<unknown> {
    const msg: ReplyMessage = { i: id, t: 'r', n: chunkCount, d: data };
    if (carry && usage) msg.u = usage;
    // The chunks this request still holds (the rest of the upstream's last read) go with the result
    // when its pod takes them so (`withTail`: the job's replyTail): one message, one publish and one
    // write to the client fewer than sending them first.
    const tail = withTail ? this.batches.get(id) : undefined;
    if (tail && tail.channel === channel) {
      this.batches.delete(id);
      msg.h = { s: tail.first, d: tail.data };
    }
    const message = JSON.stringify(msg);
    this.flush();
    const publish = (keep: string, jobEpoch: string) =>
      !usage || carry ? publishResult(this.redis, channel, id, message, keep, jobEpoch) : publishWithUsage(this.redis, channel, message, usage, keep, jobEpoch);
    const published = !chunks?.length || !epoch ? publish(keepOf(msg, chunks), '') : publish('', epoch).then((answer) => (answer === WITHHELD ? publish(keepOf(msg, chunks), '') : answer));
    tail?.resolve(published.catch(() => undefined));
    return published;
  }

  /** Where a long routed job's router stands (route-report.ts): after the chunks held, like an error. */
  route(channel: string, id: string, meta: RouteMeta): Promise<unknown> {
    return this.send(channel, { i: id, t: 'm', d: meta });
  }

  error(channel: string, id: string, err: WireError): Promise<unknown> {
    return this.send(channel, { i: id, t: 'e', d: err });
  }
}
