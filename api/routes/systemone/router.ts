import { Router, type Request, type Response, type NextFunction } from 'express';
import type { AppContext } from '../../context';
import { only } from '../only';
import { killSwitch } from '../../middleware/kill-switch';
import { boundedJson } from '../../middleware/bounded-json';
import { capabilityPolicy } from '../../../shared/policies/capability';
import { systemoneErrors } from '../../../shared/systemone/errors';
import { config } from '../../../shared/config/env';
import { systemoneHandler } from './handler';

function started(_req: Request, res: Response, next: NextFunction): void {
  res.locals.startedAt = Date.now();
  next();
}

/** 403 before the body is read when the org's policy is off. */
function policyGate(req: Request, _res: Response, next: NextFunction): void {
  if (capabilityPolicy(req.auth!.org, 'systemone') === 'off') return next(systemoneErrors.policyDisabled());
  next();
}

/**
 * `POST /v1/systemone` (decision models). Mounted before the shared JSON parser: it reads its own
 * body with the route's cap (8 MiB), refusing compressed and slow bodies. There is deliberately no
 * `/v1/systemone/models`; decision models are listed by `GET /v1/models`.
 */
export function systemoneRouter(ctx: AppContext): Router {
  const r = Router();
  const body = boundedJson(() => ({
    maxBytes: config().systemoneMaxBodyBytes,
    timeoutMs: config().systemoneBodyTimeoutMs,
    invalidCode: 'systemone_invalid_request',
  }));
  only(r, '/v1/systemone', { post: [started, killSwitch(ctx.switches, 'systemone'), policyGate, body, systemoneHandler(ctx)] });
  return r;
}
