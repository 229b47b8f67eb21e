import type { AppContext } from './context';
import type { AuthInfo } from './types';
import { NO_ALIASES } from '../shared/tenancy/directory';
import { keyRefusal } from '../shared/tenancy/key-refusal';

/** The identity a request was made with, kept by the gateway to act for its caller later (a batch, a resumed background response). */
export interface KeptIdentity {
  /** The key's hash (as stored for keys): the key itself is never kept. */
  keyHash: string;
  orgId: string;
  projectId: string | null;
  routingPlanId: string | null;
}

/**
 * The AuthInfo `authenticate` would build for the kept identity now, or undefined when its key no
 * longer works (revoked, rotated out, expired, its member gone, its org gone): checked again before each request
 * made with it. A caller's own upstream key is never kept, so none is presented.
 */
export async function identityNow(ctx: AppContext, kept: KeptIdentity): Promise<AuthInfo | undefined> {
  await ctx.directory.sync();
  const rec = await ctx.directory.keyByHash(kept.keyHash);
  const org = await ctx.directory.org(kept.orgId);
  // refused as authenticate() refuses it (shared/tenancy/key-refusal.ts), or moved to another org
  if (!rec || keyRefusal(rec) !== undefined || rec.orgId !== kept.orgId || !org) return undefined;
  const modelMap = kept.routingPlanId ? ((await ctx.directory.routingPlan(kept.routingPlanId))?.modelMap ?? NO_ALIASES) : NO_ALIASES;
  return { keyId: rec.id, keyHash: kept.keyHash, orgId: kept.orgId, org, projectId: kept.projectId, userId: rec.userId, callerUpstreamKey: null, routingPlanId: kept.routingPlanId, modelMap, controls: rec.controls };
}

/** The identity a request runs as, to be checked again (identityNow) before work the gateway does for it later. */
export function keptIdentity(a: AuthInfo): KeptIdentity {
  return { keyHash: a.keyHash, orgId: a.orgId, projectId: a.projectId, routingPlanId: a.routingPlanId };
}
