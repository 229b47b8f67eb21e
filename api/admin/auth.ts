import type { Request, Response, NextFunction } from 'express';
import type { RedisClient } from '../../shared/redis/connection';
import { authFailure } from '../../shared/auth/auth-failures';
import { ApiError } from '../../shared/errors/ApiError';
import { bearerChallenge, errors } from '../../shared/errors/codes';
import { INFERENCE_PREFIX, PLATFORM_PREFIX } from '../../shared/auth/apiKeys';
import { accessFor, allows, familyOf, isPlatformAdminPath } from '../../shared/platform/families';
import { ADMIN_TOKEN_PREFIX, authenticateSecret } from '../../shared/platform/keys';
import { insufficientScope } from './extra-scope';

/** `presented`: a bearer credential came and was refused (RFC 6750's `invalid_token`); without one, the bare challenge. */
const unauthorized = (code: string, message: string, presented = true) => new ApiError(401, code, message, { headers: bearerChallenge(presented) });

function bearer(req: Request): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return m?.[1];
}

/**
 * Authenticates and authorizes every /admin/v1 request (mounted there; `req.path` is relative).
 * - Family paths take a management key (`svc_platform_…`) holding `<family>:read` (GET, HEAD) or
 *   `<family>:write` (any other method; it implies read).
 * - Platform-admin paths (platform keys, platform-admin grants, impersonation) take only a platform
 *   admin's own token (`svc_admin_…`); a management key there is 403 whatever its scopes.
 * - An inference key (`svc_…`) never authenticates here.
 * Codes: 401 `invalid_platform_key` / `invalid_admin_token`, 403 `insufficient_scope` /
 * `platform_key_forbidden`, 404 `not_found` for a path of no family, 429 `too_many_auth_failures`
 * once an address sent too many unknown credentials. Paths are classified in their canonical
 * spelling (shared/platform/families.ts); the routers only match the exact one.
 */
export function adminAuth(deps: { redis: RedisClient }) {
  return (req: Request, _res: Response, next: NextFunction): Promise<void> => guard(deps.redis, req, next);
}

async function guard(redis: RedisClient, req: Request, next: NextFunction): Promise<void> {
  if (req.path === '/openapi.json') return next();
  const adminPath = isPlatformAdminPath(req.path);
  const missing = adminPath ? 'invalid_admin_token' : 'invalid_platform_key';
  const raw = bearer(req);
  if (!raw) throw unauthorized(missing, adminPath ? 'Send a platform admin token as Authorization: Bearer svc_admin_….' : 'Send a management key as Authorization: Bearer svc_platform_….', false);
  const principal = await authenticateSecret(raw);
  if (!principal) {
    // A presented credential that failed counts against the client's address (429 past the limit).
    if (raw.startsWith(INFERENCE_PREFIX) && !raw.startsWith(PLATFORM_PREFIX) && !raw.startsWith(ADMIN_TOKEN_PREFIX)) {
      throw await authFailure(redis, req.ip, unauthorized(missing, 'Inference API keys cannot call the management API.'));
    }
    throw await authFailure(redis, req.ip, unauthorized(raw.startsWith(PLATFORM_PREFIX) ? 'invalid_platform_key' : missing, 'Unknown or revoked credential.'));
  }
  if (adminPath) {
    if (principal.kind === 'platform_key') throw new ApiError(403, 'platform_key_forbidden', 'Management keys can never reach this path; use a platform admin token.');
    req.admin = { principal, family: null };
    return next();
  }
  if (principal.kind !== 'platform_key') throw unauthorized('invalid_platform_key', 'Admin tokens open only the platform-admin paths; use a management key.');
  const family = familyOf(req.path);
  if (!family) throw errors.notFound(`No route for ${req.method} /admin/v1${req.path}.`);
  const access = accessFor(req.method);
  if (!allows(principal.scopes, family, access)) {
    throw insufficientScope(family, access, `This key lacks the scope ${family}:${access}${access === 'read' ? ` (or ${family}:write)` : ''}.`);
  }
  req.admin = { principal, family };
  next();
}
