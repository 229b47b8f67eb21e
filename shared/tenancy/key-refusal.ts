import type { KeyRecord } from './directory';

/**
 * Why a stored key no longer authenticates, or undefined when it does: unknown, revoked, rotated out
 * (a previous secret past its grace), expired, its member gone, or its project archived. The one list both the request's
 * authentication (api/middleware/authenticate.ts) and the gateway's later work for a kept identity
 * (api/kept-identity.ts: batch lines, resumed background responses) check, so neither misses a case.
 */
export function keyRefusal(rec: KeyRecord | null, now = Date.now()): string | undefined {
  if (!rec) return 'Unknown API key.';
  if (rec.revoked) return 'This API key has been revoked.';
  if (rec.previousUntil && rec.previousUntil.getTime() <= now) return `This API key was rotated; its previous secret stopped working at ${rec.previousUntil.toISOString()}.`;
  if (rec.controls.expiresAt && rec.controls.expiresAt.getTime() <= now) return `This API key expired at ${rec.controls.expiresAt.toISOString()}.`;
  if (rec.memberGone) return 'The member this API key belongs to is no longer in the organization.';
  if (rec.projectArchived) return 'The project this API key is bound to is archived.';
  return undefined;
}
