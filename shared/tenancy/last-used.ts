import type { RedisClient } from '../redis/connection';
import { keys } from '../redis/keys';
import { ApiKey } from '../db/models';
import { logger } from '../logger';

/** A key's `last_used_at` is written at most this often, across every pod. */
export const LAST_USED_EVERY_S = 60;

/**
 * Notes that a key authenticated: one SET NX per key per minute across the pods, and the pod that
 * wins writes `api_keys.last_used_at` (no cache epoch bump: nothing cached reads it). Off the
 * request's path; a failure is logged, never answered.
 */
export function noteKeyUsed(redis: RedisClient, orgId: string, keyId: string): void {
  void redis
    .set(keys.limits(orgId, `used:${keyId}`), '1', 'EX', LAST_USED_EVERY_S, 'NX')
    .then((won) => (won ? ApiKey.update({ lastUsedAt: new Date() }, { where: { id: keyId } }) : undefined))
    .catch((err) => logger.warn({ err }, 'last-used update failed'));
}
