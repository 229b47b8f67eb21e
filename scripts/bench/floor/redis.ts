import { Redis } from 'ioredis';
import { corkPerTurn } from '../../../shared/redis/cork';

/**
 * A connection of the floor's: BullMQ's settings (no retry limit per request). FLOOR_CORK=1: it
 * writes a turn's commands in one socket write, as the gateway's do (shared/redis/cork.ts).
 */
export function floorRedis(url: string): Redis {
  const r = new Redis(url, { maxRetriesPerRequest: null });
  if (process.env.FLOOR_CORK === '1') corkPerTurn(r);
  return r;
}
