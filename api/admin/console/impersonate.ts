import type { Request } from 'express';
import type { RedisClient } from '../../../shared/redis/connection';
import type { User } from '../../../shared/db/models';
import { config } from '../../../shared/config/env';
import { recordAudit, type Actor } from '../../../shared/audit/audit';
import { createImpersonationTicket, IMPERSONATION_MINUTES } from '../../../shared/web/impersonation';

/**
 * Starts an impersonation of `user` by `admin` (console button and `POST /admin/v1/users/:id/impersonate`):
 * a one-use ticket whose link opens the user's dashboard on the web process (PUBLIC_BASE_URL, else
 * this host on PORT). Audited here for the console; the API's own audit covers its request.
 */
export async function startImpersonation(redis: RedisClient, req: Request, user: User, actor: Actor | null, admin: { id: string; email: string }): Promise<{ url: string; path: string; minutes: number }> {
  const ticket = await createImpersonationTicket(redis, { userId: user.id, adminId: admin.id, adminEmail: admin.email });
  const path = `/dashboard/impersonate?ticket=${encodeURIComponent(ticket)}`;
  const base = config().publicBaseUrl ?? `${req.protocol}://${req.hostname}:${config().port}`;
  if (actor) await recordAudit({ actor, method: 'POST', path: `/admin/v1/users/${user.id}/impersonate`, family: 'users', targetId: user.id, status: 201, requestId: req.id });
  return { url: `${base}${path}`, path, minutes: IMPERSONATION_MINUTES };
}
