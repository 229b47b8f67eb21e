import type { AppContext } from './context';
import type { AuthInfo } from './types';
import { NO_ALIASES } from '../shared/tenancy/directory';
import { keyRefusal } from '../shared/tenancy/key-refusal';
import { ApiError } from '../shared/errors/ApiError';
import { errors } from '../shared/errors/codes';

/** The identity a request was made with, kept by the gateway to act for its caller later (a batch, a resumed background response). */
export interface KeptIdentity {
  /** The key's hash (as stored for keys): the key itself is never kept. */
  keyHash: string;
  orgId: string;
  projectId: string | null;
  routingPlanId: string | null;
}

/**
 * The AuthInfo `authenticate` would build for the kept identity now, or the error its request would
 * get now: 401 `INVALID_API_KEY` when its key no longer works (revoked, rotated out, expired, its
 * member gone, its org gone; `made` says what the key made, for the message), 400 `invalid_project`
 * when the project it was made in (a header's, a path's, a routing plan's) has been archived since.
 * Checked again before each request made with it. A caller's own upstream key is never kept, so none is presented.
 */
export async function identityNow(ctx: AppContext, kept: KeptIdentity, made: string): Promise<AuthInfo | ApiError> {
  await ctx.directory.sync();
  const rec = await ctx.directory.keyByHash(kept.keyHash);
  const org = await ctx.directory.org(kept.orgId);
  // refused as authenticate() refuses it (shared/tenancy/key-refusal.ts), or moved to another org
  if (!rec || keyRefusal(rec) !== undefined || rec.orgId !== kept.orgId || !org) return errors.invalidApiKey(`The API key that ${made} no longer works.`);
  // archived since: authenticate() refuses it as SERVICE-PROJECT-ID (it ran on, billed to the archived project)
  if (kept.projectId && !(await ctx.directory.project(kept.orgId, kept.projectId))) return new ApiError(400, 'invalid_project', 'The project this was made in has been archived.');
  const modelMap = kept.routingPlanId ? ((await ctx.directory.routingPlan(kept.routingPlanId))?.modelMap ?? NO_ALIASES) : NO_ALIASES;
  return { keyId: rec.id, keyHash: kept.keyHash, orgId: kept.orgId, org, projectId: kept.projectId, userId: rec.userId, callerUpstreamKey: null, routingPlanId: kept.routingPlanId, modelMap, controls: rec.controls };
}

/** The identity a request runs as, to be checked again (identityNow) before work the gateway does for it later. */
export function keptIdentity(a: AuthInfo): KeptIdentity {
  return { keyHash: a.keyHash, orgId: a.orgId, projectId: a.projectId, routingPlanId: a.routingPlanId };
}
