import type { Request, Response } from 'express';
import type { AppContext } from '../../context';
import type { RedisClient } from '../../../shared/redis/connection';
import { keys } from '../../../shared/redis/keys';
import { ApiError } from '../../../shared/errors/ApiError';
import { logger } from '../../../shared/logger';
import { SseWriter } from '../../sse';
import type { ResponsesEvent } from '../../dialects/responses/event-writer';
import { findStored } from './store';
import { shownEvent } from './include';
import { identityNow, keptIdentity } from '../../kept-identity';

/** How long a running background stream's events are kept, and how long after it ends. */
const RUNNING_TTL_MS = 24 * 3_600_000;
export const ENDED_TTL_MS = 3_600_000;
/** How often a follower looks for new events, and checks that the run it follows is still alive. */
const POLL_MS = 100;
const ALIVE_CHECK_MS = 5_000;

/**
 * The events of a background response made with `stream: true`, in a Redis stream (one entry an
 * event, field `e`; a last entry with field `end` when the run is over): the pod running it appends
 * them whole (a reasoning item's `encrypted_content`, log probabilities) as it sends them to its own
 * client, and `GET /v1/responses/{id}?stream=true` replays them on any pod and follows the rest, each
 * shown as that GET's `include` asks (include.ts). Commands are issued in order on one connection, so
 * the entries keep the events' order without waiting for each.
 */
export class BackgroundEventLog {
  private readonly key: string;
  constructor(
    private readonly redis: RedisClient,
    id: string,
  ) {
    this.key = keys.backgroundEvents(id);
  }

  add(ev: ResponsesEvent): void {
    this.redis.xadd(this.key, '*', 'e', JSON.stringify(ev)).catch((err: unknown) => logger.warn({ err }, 'background event not kept'));
  }

  /** The run is over: followers stop at this entry; the events are kept ENDED_TTL_MS more. */
  async end(): Promise<void> {
    await this.redis
      .multi()
      .xadd(this.key, '*', 'end', '1')
      .pexpire(this.key, ENDED_TTL_MS)
      .exec()
      .catch((err: unknown) => logger.warn({ err }, 'background event log not ended'));
  }

  /** Opens the log (its first events with it), for RUNNING_TTL_MS at most. */
  async open(events: ResponsesEvent[]): Promise<void> {
    const m = this.redis.multi();
    for (const ev of events) m.xadd(this.key, '*', 'e', JSON.stringify(ev));
    await m.pexpire(this.key, RUNNING_TTL_MS).exec();
  }
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);
const RUNNING = ['queued', 'in_progress'];

function startingAfter(req: Request): number {
  const raw = req.query.starting_after;
  if (raw === undefined) return -1;
  const n = Number(raw);
  if (typeof raw !== 'string' || !/^-?\d+$/.test(raw) || !Number.isSafeInteger(n) || n < -1) {
    throw new ApiError(400, 'invalid_request', "'starting_after' must be an integer: the sequence number of the last event received.", { param: 'starting_after' });
  }
  return n;
}

/**
 * `GET /v1/responses/{id}?stream=true[&starting_after=N]`: the events of a background response made
 * with `stream: true`, from the one after sequence number N (all of them without it), then each new one
 * as its run sends it, until the run ends (its last event; a cancelled run ends with none), each as
 * the GET's own `include` asks (shownEvent), whatever the create's said. Any pod serves it. A response
 * not made so, or whose events are no longer kept (ENDED_TTL_MS after its end), is 400.
 */
export async function followBackground(ctx: AppContext, req: Request, res: Response, include: string[]): Promise<void> {
  const id = String(req.params.id);
  const after = startingAfter(req);
  const row = await findStored(req, id);
  if (row.response.background !== true) {
    throw new ApiError(400, 'invalid_request', 'Only responses created with background=true and stream=true can be streamed; GET it without stream.', { param: 'stream' });
  }
  const key = keys.backgroundEvents(id);
  if (!(await ctx.redis.exists(key))) {
    throw new ApiError(400, 'invalid_request', 'This response has no events to stream: it was not created with stream=true, or they are no longer kept (1 h after it ended). GET it without stream.', { param: 'stream' });
  }
  const sse = new SseWriter(res);
  sse.start();
  res.flushHeaders();
  let gone = false;
  res.once('close', () => (gone = true));
  let last = '-';
  /** The sequence number of the last event sent (or the one the follower had). */
  let sent = after;
  let checkedAt = Date.now();
  /** Set once the run is seen over without its end entry (its pod died; or its last events are on their way). */
  let endBy: number | undefined;
  while (!gone) {
    const entries = (await ctx.redis.xrange(key, last === '-' ? '-' : `(${last}`, '+', 'COUNT', 500)) as Array<[string, string[]]>;
    for (const [entryId, fields] of entries) {
      last = entryId;
      if (fields[0] === 'end') return void sse.end();
      const ev = JSON.parse(fields[1]) as ResponsesEvent;
      if (ev.sequence_number > after) {
        sent = ev.sequence_number;
        const shown = shownEvent(ev, include);
        sse.send(shown === ev ? fields[1] : JSON.stringify(shown), ev.type);
      }
      if (TERMINAL.has(ev.type)) return void sse.end();
    }
    if (entries.length === 500) continue;
    if (endBy !== undefined && Date.now() > endBy) return void sse.end();
    if (Date.now() - checkedAt > ALIVE_CHECK_MS) {
      checkedAt = Date.now();
      // the follower's key checked again, as a run's is (api/kept-identity.ts): a key revoked, rotated out or
      // expired while it follows (for as long as the run lasts) gets no more of it, told so by OpenAI's
      // `error` event (ResponseErrorEvent: code, message, param, sequence_number), at which the SDK stops
      const refused = await identityNow(ctx, keptIdentity(req.auth!), 'is following this response');
      if (refused instanceof ApiError) {
        sse.send(JSON.stringify({ type: 'error', code: refused.code, message: refused.message, param: null, sequence_number: sent + 1 }), 'error');
        return void sse.end();
      }
      if (endBy === undefined) {
        const now = await findStored(req, id).catch(() => undefined);
        if (!now || !RUNNING.includes(String(now.response.status))) endBy = Date.now() + ALIVE_CHECK_MS;
      }
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
