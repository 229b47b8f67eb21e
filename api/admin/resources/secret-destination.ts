import type { Request } from 'express';
import { holds, requireScope } from '../extra-scope';

/**
 * Where a secret goes is the secret's family (docs/security.md). A provider's secrets (a model
 * provider's platform credential or stored key; a search provider's platform key and the organizations'
 * own keys for it) are sent to its `base_url`, and they are write-only, family `platform-credentials`:
 * a write that changes the origin they are sent to would let a key without that family's write read
 * them off a server of its choosing. The callers decide whether a write moves one; these say who may.
 */

/** The origin (scheme, host, port) requests to this URL go to; undefined when it is no URL. */
export function originOf(url: unknown): string | undefined {
  try {
    return new URL(String(url)).origin;
  } catch {
    return undefined;
  }
}

/** The key may send secrets elsewhere (it could replace them anyway): callers skip their look-ups. */
export const mayRedirectSecrets = (req: Request): boolean => holds(req, 'platform-credentials', 'write');

/** 403 `insufficient_scope` naming `platform-credentials:write`, unless the key holds it. */
export const refuseSecretRedirect = (req: Request, message: string, param: string): void => requireScope(req, 'platform-credentials', 'write', message, param);
