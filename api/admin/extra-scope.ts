import type { Request } from 'express';
import { ApiError } from '../../shared/errors/ApiError';
import { scopeChallenge } from '../../shared/errors/codes';
import { allows, type Access, type Family } from '../../shared/platform/families';

/**
 * Whether the management key of this request holds `<family>:<access>`. The guard (./auth.ts) checked
 * the path's own family; this is for what a handler finds needs more (a secret moved, a secret shown).
 * No principal: false (fail closed).
 */
export const holds = (req: Request, family: Family, access: Access): boolean => allows(req.admin?.principal.scopes ?? [], family, access);

/** 403 `insufficient_scope` for a key without `<family>:<access>`, its WWW-Authenticate challenge naming the scope: the guard's (./auth.ts) and requireScope's. */
export function insufficientScope(family: Family, access: Access, message: string, param?: string): ApiError {
  return new ApiError(403, 'insufficient_scope', message, { headers: scopeChallenge(`${family}:${access}`), ...(param ? { param } : {}) });
}

/** insufficientScope unless the key holds `<family>:<access>`. */
export function requireScope(req: Request, family: Family, access: Access, message: string, param?: string): void {
  if (!holds(req, family, access)) throw insufficientScope(family, access, message, param);
}
