import type { RedisClient } from '../redis/connection';
import { keys } from '../redis/keys';
import { ApiKey } from '../db/models';
import { logger } from '../logger';

/** A key's `last_used_at` is written at most this often, across every pod. */
export const LAST_USED_EVERY_S = 60;

/** Keys this process has noted, and until when (ms) it sends no other note for them. */
const noted = new Map<string, number>();
/** Past this many entries, a note first drops the ones that are due again. */
const NOTED_PRUNE_AT = 10_000;

/**
 * Notes that a key authenticated: one SET NX per key per minute across the pods, and the pod that
 * wins writes `api_keys.last_used_at` (no cache epoch bump: nothing cached reads it). A process that
 * has sent the SET for a key sends none for it in the minute after (no Redis command per request),
 * so the column may lag its last use by up to two minutes. Off the request's path; a failure is
 * logged, never answered. The promise is for tests: callers do not wait for it.
 */
export function noteKeyUsed(redis: RedisClient, orgId: string, keyId: string): Promise<void> {
  const now = Date.now();
  if ((noted.get(keyId) ?? 0) > now) return Promise.resolve();
  if (noted.size >= NOTED_PRUNE_AT) for (const [id, until] of noted) if (until <= now) noted.delete(id);
  noted.set(keyId, now + LAST_USED_EVERY_S * 1000);
  return redis
    .set(keys.limits(orgId, `used:${keyId}`), '1', 'EX', LAST_USED_EVERY_S, 'NX')
    .then(async (won) => {
      if (won) await ApiKey.update({ lastUsedAt: new Date() }, { where: { id: keyId } });
    })
    .catch((err) => logger.warn({ err }, 'last-used update failed'));
}
