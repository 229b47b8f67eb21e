import type { Redis } from 'ioredis';
import type { ReplyMessage } from './reply-messages';
import type { WireError } from '../errors/ApiError';
import type { UsageRecord } from '../metering/usage';
import { publishWithUsage } from '../metering/usage-outbox';

/** The worker side of request-reply. */
export class ReplyPublisher {
  constructor(private readonly redis: Redis) {}

  private send(channel: string, msg: ReplyMessage): Promise<unknown> {
    return this.redis.publish(channel, JSON.stringify(msg));
  }

  chunk(channel: string, id: string, seq: number, data: string): Promise<unknown> {
    return this.send(channel, { i: id, t: 'c', s: seq, d: data });
  }

  /**
   * The final result. With `usage`, the request's usage event goes into the outbox in the same
   * script (one round trip): the result is published only if the event was stored.
   */
  result(channel: string, id: string, chunkCount: number, data: unknown, usage?: UsageRecord): Promise<unknown> {
    const msg: ReplyMessage = { i: id, t: 'r', n: chunkCount, d: data };
    return usage ? publishWithUsage(this.redis, channel, JSON.stringify(msg), usage) : this.send(channel, msg);
  }

  error(channel: string, id: string, err: WireError): Promise<unknown> {
    return this.send(channel, { i: id, t: 'e', d: err });
  }
}
