import type { OrgContext } from '../tenancy/directory';
import type { Lane } from './leases';

/** Background work runs on the background lane only for entitled orgs; others run it interactive. */
export function laneFor(org: OrgContext, wantsBackground: boolean): Lane {
  return wantsBackground && org.entitlements.background === true ? 'background' : 'interactive';
}

/** The org's lane count for a pool and lane: org override, else plan, else the default table. */
export function laneLimit(org: OrgContext, pool: string, lane: string, fallback = 8): number {
  const v = org.laneLimits[`${pool}:${lane}`];
  return typeof v === 'number' && v >= 0 ? v : fallback;
}
