import { Redis } from 'ioredis';
import { corkPerTurn } from '../../../shared/redis/cork';

/**
 * A connection of the floor's: BullMQ's settings (no retry limit per request). It writes the commands
 * of one event-loop iteration in one socket write, as the gateway's do (shared/redis/cork.ts): the
 * floor lowered (issue 29 §2, docs/benchmark.md). FLOOR_CORK=tick: after each callback instead
 * (the gateway's REDIS_CORK_UNTIL=tick); FLOOR_CORK=off: not corked, the floor before 2026-11-28.
 */
export function floorRedis(url: string): Redis {
  const r = new Redis(url, { maxRetriesPerRequest: null });
  const cork = process.env.FLOOR_CORK ?? 'iteration';
  if (cork === 'iteration' || cork === 'tick') corkPerTurn(r, cork);
  return r;
}
