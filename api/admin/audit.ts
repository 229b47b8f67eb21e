import type { Request, Response, NextFunction } from 'express';
import { recordAudit } from '../../shared/audit/audit';
import { actorOf } from './actor';

const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/**
 * Audits every authenticated write (any method but GET/HEAD/OPTIONS) once its answer is sent,
 * whatever the outcome. Handlers name the target in `res.locals.auditTarget`; otherwise the last id in
 * the path. Only the names of the body's fields are kept, never values.
 */
export function auditWrites(req: Request, res: Response, next: NextFunction): void {
  const actor = actorOf(req);
  if (!actor || ['GET', 'HEAD', 'OPTIONS'].includes(req.method)) return next();
  const path = `/admin/v1${req.path}`;
  res.on('finish', () => {
    const fromPath = path.match(UUIDS);
    void recordAudit({
      actor,
      method: req.method,
      path,
      family: req.admin?.family ?? 'platform-admin',
      targetId: (res.locals.auditTarget as string | undefined) ?? fromPath?.[fromPath.length - 1] ?? null,
      status: res.statusCode,
      requestId: req.id,
      fields: req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? Object.keys(req.body).slice(0, 50) : [],
    });
  });
  next();
}
