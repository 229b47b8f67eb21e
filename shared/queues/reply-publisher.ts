import type { Redis } from 'ioredis';
import type { ReplyMessage } from './reply-messages';
import type { WireError } from '../errors/ApiError';

/** The worker side of request-reply. */
export class ReplyPublisher {
  constructor(private readonly redis: Redis) {}

  private send(channel: string, msg: ReplyMessage): Promise<unknown> {
    return this.redis.publish(channel, JSON.stringify(msg));
  }

  chunk(channel: string, id: string, seq: number, data: string): Promise<unknown> {
    return this.send(channel, { i: id, t: 'c', s: seq, d: data });
  }

  result(channel: string, id: string, chunkCount: number, data: unknown): Promise<unknown> {
    return this.send(channel, { i: id, t: 'r', n: chunkCount, d: data });
  }

  error(channel: string, id: string, err: WireError): Promise<unknown> {
    return this.send(channel, { i: id, t: 'e', d: err });
  }
}
