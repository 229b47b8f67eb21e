import type { Request, Response } from 'express';
import type { AppContext } from '../context';
import { ApiError } from '../../shared/errors/ApiError';
import { keys } from '../../shared/redis/keys';
import { sha256Hex } from '../../shared/crypto';
import { logger } from '../../shared/logger';
import { logState, routeOf } from '../middleware/request-log';
import { countRequestOnly } from './limits';
import { servedByFallback } from './route';

/** How long an answer is kept by default, and at most (`SERVICE-CACHE-TTL`, seconds). */
const DEFAULT_TTL_S = 3600;
const MAX_TTL_S = 7 * 24 * 3600;

type Mode = 'off' | 'on' | 'refresh';

function modeOf(req: Request): { mode: Mode; ttlS: number } {
  const raw = req.get('service-cache');
  if (raw === undefined) return { mode: 'off', ttlS: 0 };
  const mode = raw.trim().toLowerCase();
  if (mode !== 'on' && mode !== 'off' && mode !== 'refresh') {
    throw new ApiError(400, 'invalid_request', "The 'SERVICE-CACHE' header must be 'on', 'refresh' or 'off'.", { param: 'SERVICE-CACHE' });
  }
  const ttlRaw = req.get('service-cache-ttl');
  const ttlS = ttlRaw === undefined ? DEFAULT_TTL_S : Number(ttlRaw);
  if (!Number.isInteger(ttlS) || ttlS < 1 || ttlS > MAX_TTL_S) {
    throw new ApiError(400, 'invalid_request', `The 'SERVICE-CACHE-TTL' header must be a whole number of seconds from 1 to ${MAX_TTL_S}.`, { param: 'SERVICE-CACHE-TTL' });
  }
  return { mode, ttlS };
}

/**
 * The exact-match answer cache, opted into per request (`SERVICE-CACHE: on`; docs/api.md): an answer
 * is kept for `SERVICE-CACHE-TTL` seconds (default 1 hour) under a digest of the organization, the
 * route and the request body, and the same request of the same organization is answered from it
 * (`x-service-cache: HIT`) without a lane, an upstream call or a charge. A miss runs `compute` and
 * keeps its answer (`MISS`); `refresh` runs it whatever is kept and keeps the new answer. Only an
 * answer is kept, never a failure. A cache that fails (Redis) is passed by, not the request's failure.
 */
export async function throughCache<T>(ctx: AppContext, req: Request, res: Response, body: unknown, compute: () => Promise<T>): Promise<T> {
  const { mode, ttlS } = modeOf(req);
  if (mode === 'off') return compute();
  const key = keyOf(req, body);
  if (mode === 'on') {
    const kept = await readKept(ctx, req, res, body, key);
    if (kept) return JSON.parse(kept) as T;
  }
  const value = await compute();
  res.setHeader('x-service-cache', mode === 'refresh' ? 'REFRESH' : 'MISS');
  await keep(ctx, res, key, value, ttlS);
  return value;
}

/** Writes one event of a stream: its data, and its SSE event name where the dialect has one. */
export type StreamSend = (data: string, event?: string) => void;

/**
 * A streamed answer through the same cache (`stream: true` is part of the body, so a stream and a JSON
 * answer are kept apart): a hit replays the kept events in order through `send` (`x-service-cache:
 * HIT`, set before the stream's headers go out) and runs nothing; a miss or a refresh runs `run`, which
 * writes through the send it is given, and keeps the events once it ended whole (a stream that failed
 * is not kept).
 */
export async function streamThroughCache(ctx: AppContext, req: Request, res: Response, body: unknown, send: StreamSend, run: (send: StreamSend) => Promise<void>): Promise<void> {
  const { mode, ttlS } = modeOf(req);
  if (mode === 'off') return run(send);
  const key = keyOf(req, body);
  if (mode === 'on') {
    const kept = await readKept(ctx, req, res, body, key);
    if (kept) {
      for (const [data, event] of JSON.parse(kept) as Array<[string, string | undefined]>) send(data, event ?? undefined);
      return;
    }
  }
  res.setHeader('x-service-cache', mode === 'refresh' ? 'REFRESH' : 'MISS');
  const events: Array<[string, string | null]> = [];
  await run((data, event) => {
    events.push([data, event ?? null]);
    send(data, event);
  });
  await keep(ctx, res, key, events, ttlS);
}

/**
 * The digest names the model the body's `model` resolves to for this request (a routing plan's alias
 * is its target): two plans of one org may map one alias to different models, and an answer made by
 * one must never answer the other (nor a key whose allowed models hold only the other).
 */
function keyOf(req: Request, body: unknown): string {
  const asked = (body as { model?: unknown } | null)?.model;
  const target = typeof asked === 'string' ? (req.auth!.modelMap[asked] ?? asked) : '';
  // the project too: stored objects are the project's (docs/api.md, "Project scope"), and so is an answer
  return keys.responseCache(sha256Hex(`${req.auth!.orgId}\n${req.auth!.projectId ?? ''}\n${routeOf(req)}\n${target}\n${JSON.stringify(body)}`));
}

/**
 * A kept answer, if any: it is one request for the key's `rpm` (a member's limit holds on hits too),
 * the response is marked a hit, and its Activity row (no job ran) names the model asked for (an
 * alias: the model it names).
 */
async function readKept(ctx: AppContext, req: Request, res: Response, body: unknown, key: string): Promise<string | undefined> {
  const kept = await ctx.redis.get(key).catch((err: unknown) => void logger.warn({ err }, 'answer cache not read'));
  if (!kept) return undefined;
  await countRequestOnly(ctx, req);
  res.setHeader('x-service-cache', 'HIT');
  const state = logState(res);
  const model = (body as { model?: unknown } | null)?.model;
  if (state && typeof model === 'string') state.model = req.auth!.modelMap[model] ?? model; // as runJob names it
  return kept;
}

/**
 * Keeps an answer, unless a fallback model served it: it is kept under the model asked for, and a key
 * whose allowed models hold that model but not its fallback would get the fallback's answer from the
 * cache (a fallback serves such a key only when it is on its list too: docs/keys.md).
 */
async function keep(ctx: AppContext, res: Response, key: string, value: unknown, ttlS: number): Promise<void> {
  if (servedByFallback(res)) return;
  await ctx.redis.set(key, JSON.stringify(value), 'EX', ttlS).catch((err: unknown) => logger.warn({ err }, 'answer not cached'));
}
