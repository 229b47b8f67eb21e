import type { Redis } from 'ioredis';
import type { ReplyMessage } from './reply-messages';
import type { WireError } from '../errors/ApiError';
import type { UsageRecord } from '../metering/usage';
import { publishWithUsage } from '../metering/usage-outbox';

interface Held {
  channel: string;
  message: string;
  done: { resolve: (v: unknown) => void; reject: (err: unknown) => void };
}

/**
 * The worker side of request-reply. A stream's first chunk is published at once (time to first
 * token); later chunks produced in the same event-loop turn (events that came in one upstream read,
 * from every job of the process) go out together as one pipeline. Anything published after them
 * (a result, an error) first sends what is held, so the pod sees every message in sequence order.
 */
export class ReplyPublisher {
  private held: Held[] = [];

  constructor(private readonly redis: Redis) {}

  private send(channel: string, msg: ReplyMessage): Promise<unknown> {
    this.flush();
    return this.redis.publish(channel, JSON.stringify(msg));
  }

  chunk(channel: string, id: string, seq: number, data: string): Promise<unknown> {
    const message: ReplyMessage = { i: id, t: 'c', s: seq, d: data };
    if (seq === 0) return this.send(channel, message);
    return new Promise((resolve, reject) => {
      this.held.push({ channel, message: JSON.stringify(message), done: { resolve, reject } });
      if (this.held.length === 1) setImmediate(() => this.flush());
    });
  }

  /** Sends the held chunks (one write); commands issued after this on the connection follow them. */
  private flush(): void {
    if (this.held.length === 0) return;
    const batch = this.held;
    this.held = [];
    const p = this.redis.pipeline();
    for (const h of batch) p.publish(h.channel, h.message);
    p.exec().then(
      (results) => batch.forEach((h, i) => (results?.[i]?.[0] ? h.done.reject(results[i][0]) : h.done.resolve(results?.[i]?.[1]))),
      (err) => batch.forEach((h) => h.done.reject(err)),
    );
  }

  /**
   * The final result. With `usage`, the request's usage event goes into the outbox in the same
   * script (one round trip): the result is published only if the event was stored.
   */
  result(channel: string, id: string, chunkCount: number, data: unknown, usage?: UsageRecord): Promise<unknown> {
    const msg: ReplyMessage = { i: id, t: 'r', n: chunkCount, d: data };
    this.flush();
    return usage ? publishWithUsage(this.redis, channel, JSON.stringify(msg), usage) : this.send(channel, msg);
  }

  error(channel: string, id: string, err: WireError): Promise<unknown> {
    return this.send(channel, { i: id, t: 'e', d: err });
  }
}
