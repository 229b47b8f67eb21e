import type { RedisClient } from '../redis/connection';
import { keys } from '../redis/keys';
import type { JobResult } from './payloads';
import type { ReplyMessage } from './reply-messages';

/**
 * The one copy of a finished request's answer that Redis keeps for a pod that missed the reply
 * (pub/sub drops messages while a subscriber reconnects): written by the script that publishes the
 * result (`PUBLISH_RESULT` below, or the usage outbox's `PUBLISH_WITH_USAGE`), in the slot of the
 * request's reply channel, for KEPT_RESULT_TTL_MS. The job's own return value
 * holds nothing, so the answer is not also stored in the job and copied into BullMQ's `completed`
 * event. What is kept: the final reply message itself for a JSON answer, and for a stream
 * `{ m: <final message>, c: <every chunk> }` so a pod that missed chunks can replay them.
 *
 * A stream's chunks are kept only when its pod may have missed some. The pod raises its channel's
 * epoch (keys.replyEpoch) whenever its subscriber was away, before it listens again, and the job
 * carries the epoch it had when the job was added (`replyEpoch`). The worker first publishes the
 * result with the final message alone and that epoch (`withheld`); the script refuses (WITHHELD)
 * when the epoch moved or nobody listens on the channel, and the worker publishes again with the
 * chunks. Otherwise the pod has heard every chunk on a subscription that never lapsed, and the
 * chunks (about as many bytes again as the stream itself) are neither sent to Redis nor stored.
 */

/**
 * How long an answer is kept. A pod that missed a reply recovers it after REPLY_POLL_MS of quiet
 * (default 1 s) or as soon as its subscriber reconnects. The bound is time only (BullMQ also capped
 * completed jobs at 20,000, which at 1,000 requests/s kept them 20 s), so it is short: at 1,000
 * streamed requests/s of about 3 KB of chunks, 30 s is about 90 MB of Redis.
 */
export const KEPT_RESULT_TTL_MS = 30_000;

/** A publishing script's answer when a stream's withheld chunks must be sent after all (see above). */
export const WITHHELD = -2;

/**
 * The check both publishing scripts start with, in Lua: `epochKey` the channel's epoch key, `jobEpoch`
 * the epoch the job carries ('' when nothing is withheld); `listeners` must hold the channel's
 * subscriber count (PUBSUB SHARDNUMSUB).
 */
export const withheldCheck = (epochKey: string, jobEpoch: string) =>
  `if ${jobEpoch} ~= '' and (listeners == 0 or redis.call('GET', ${epochKey}) ~= ${jobEpoch}) then return ${WITHHELD} end`;

/**
 * publish-result (a result with no usage event): KEYS[1] kept result  KEYS[2] reply channel (sharded)
 * KEYS[3] the channel's epoch  ARGV[1] reply message  ARGV[2] what to keep ('': the message itself)
 * ARGV[3] its TTL (ms)  ARGV[4] the job's epoch when a stream's chunks are withheld, else ''.
 * Returns WITHHELD (nothing done) when the withheld chunks must be kept after all.
 */
export const PUBLISH_RESULT = `
local listeners = ARGV[4] == '' and 1 or redis.call('PUBSUB', 'SHARDNUMSUB', KEYS[2])[2]
${withheldCheck('KEYS[3]', 'ARGV[4]')}
redis.call('SET', KEYS[1], ARGV[2] == '' and ARGV[1] or ARGV[2], 'PX', ARGV[3])
return redis.call('SPUBLISH', KEYS[2], ARGV[1])
`;

interface StoreCommands {
  gwPublishResult(kept: string, channel: string, epoch: string, message: string, keep: string, ttl: number, jobEpoch: string): Promise<number>;
}

/** What the publishing script keeps besides the message: '' (the message itself) or the stream's chunks with it. */
export function keepOf(msg: ReplyMessage, chunks?: string[]): string {
  return chunks && chunks.length ? JSON.stringify({ m: msg, c: chunks }) : '';
}

/** Publishes a result with no usage event and keeps it for recovery, in one script. */
export function publishResult(redis: RedisClient, channel: string, id: string, message: string, keep: string, jobEpoch = ''): Promise<number> {
  if (!('gwPublishResult' in redis)) redis.defineCommand('gwPublishResult', { numberOfKeys: 3, lua: PUBLISH_RESULT });
  return (redis as RedisClient & StoreCommands).gwPublishResult(keys.replyResult(channel, id), channel, keys.replyEpoch(channel), message, keep, KEPT_RESULT_TTL_MS, jobEpoch);
}

/**
 * The kept answer of request `id` on reply channel `replyTo`, as the job's return value used to hold
 * it; undefined when none is kept. A stream kept without its chunks (its pod heard them all) reports
 * how many there were (`chunkCount`), so a pod that did miss some can tell.
 */
export async function readKeptResult(redis: RedisClient, replyTo: string, id: string): Promise<JobResult | undefined> {
  const raw = await redis.get(keys.replyResult(replyTo, id));
  let kept: ReplyMessage | { m: ReplyMessage; c: string[] } | undefined;
  try {
    kept = raw ? JSON.parse(raw) : undefined;
  } catch {
    return undefined;
  }
  if (!kept || typeof kept !== 'object') return undefined;
  const usage = (m: ReplyMessage) => (m.t === 'r' && m.u ? { usage: m.u } : {});
  if ('m' in kept) return kept.m?.t === 'r' && Array.isArray(kept.c) ? { result: kept.m.d, chunks: kept.c, ...usage(kept.m) } : undefined;
  return kept.t === 'r' ? { result: kept.d, ...(kept.n ? { chunkCount: kept.n } : {}), ...(kept.h && typeof kept.h.s === 'number' && Array.isArray(kept.h.d) ? { tail: kept.h } : {}), ...usage(kept) } : undefined;
}
