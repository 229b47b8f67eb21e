import type { RedisClient } from '../redis/connection';
import type { ReplyMessage } from './reply-messages';
import type { WireError } from '../errors/ApiError';
import type { UsageRecord } from '../metering/usage';
import { publishWithUsage } from '../metering/usage-outbox';
import { TurnPipeline } from '../redis/turn-pipeline';

/**
 * The worker side of request-reply. A stream's first chunk is published at once (time to first
 * token); later chunks produced in the same event-loop turn (events that came in one upstream read,
 * from every job of the process) go out together as one pipeline. Anything published after them
 * (a result, an error) first sends what is held, so the pod sees every message in sequence order.
 */
export class ReplyPublisher {
  private readonly chunks: TurnPipeline;

  constructor(private readonly redis: RedisClient) {
    this.chunks = new TurnPipeline(redis);
  }

  private send(channel: string, msg: ReplyMessage): Promise<unknown> {
    this.chunks.flush();
    return this.redis.spublish(channel, JSON.stringify(msg));
  }

  chunk(channel: string, id: string, seq: number, data: string): Promise<unknown> {
    const message: ReplyMessage = { i: id, t: 'c', s: seq, d: data };
    if (seq === 0) return this.send(channel, message);
    const text = JSON.stringify(message);
    return this.chunks.send(channel, (p) => p.spublish(channel, text));
  }

  /**
   * The final result. With `usage`, the request's usage event goes into the outbox in the same
   * script (one round trip): the result is published only if the event was stored.
   */
  result(channel: string, id: string, chunkCount: number, data: unknown, usage?: UsageRecord): Promise<unknown> {
    const msg: ReplyMessage = { i: id, t: 'r', n: chunkCount, d: data };
    if (!usage) return this.send(channel, msg);
    this.chunks.flush();
    return publishWithUsage(this.redis, channel, JSON.stringify(msg), usage);
  }

  error(channel: string, id: string, err: WireError): Promise<unknown> {
    return this.send(channel, { i: id, t: 'e', d: err });
  }
}
