import type { Request } from 'express';
import type { Actor } from '../../shared/audit/audit';

/** The audit actor of an authenticated management request. */
export function actorOf(req: Request): Actor | null {
  const p = req.admin?.principal;
  if (!p) return null;
  return p.kind === 'platform_key'
    ? { type: 'platform_key', id: p.id, label: `${p.prefix}… (${p.user.email})` }
    : { type: 'admin_token', id: p.user.id, label: p.user.email };
}
