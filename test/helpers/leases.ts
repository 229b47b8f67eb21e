import type { LeaseManager } from '../../shared/lanes/leases';
import { waitFor } from './wait';

/**
 * Whether the org's lane is free again within `ms`. A pod keeps a released lease for LEASE_KEEP_MS
 * (a few ms) for the org's next request before it frees it in Redis, so "released" is awaited, not
 * read the instant the response ends.
 */
export function leasesFreed(leases: LeaseManager, orgId: string, pool: string, lane: string, ms = 3000): Promise<boolean> {
  return waitFor(async () => (await leases.count(orgId, pool, lane)) === 0, ms, 10);
}
