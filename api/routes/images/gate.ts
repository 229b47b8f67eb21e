import type { Request, Response, NextFunction } from 'express';
import type { AppContext } from '../../context';
import { capabilityPolicy } from '../../../shared/policies/capability';
import { imageErrors } from '../../../shared/images/errors';

/**
 * Image generation, edits and uploads answer 503 `image_generation_disabled` while the operator's
 * switch is engaged or the org's `image_generation` policy is off. Checked before the body is read.
 */
export function imageGate(ctx: AppContext) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (ctx.switches.engaged('image_generation')) return next(imageErrors.disabled('operator'));
    if (capabilityPolicy(req.auth!.org, 'image_generation') === 'off') return next(imageErrors.disabled('organization'));
    next();
  };
}
