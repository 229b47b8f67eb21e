import type { Request, Response, NextFunction } from 'express';
import type { AppContext } from '../../context';
import { capabilityPolicy } from '../../../shared/policies/capability';
import type { OrgContext } from '../../../shared/tenancy/directory';
import { imageErrors } from '../../../shared/images/errors';

/**
 * Image generation, edits and uploads answer 503 `image_generation_disabled` while the operator's
 * switch is engaged or the org's `image_generation` policy is off. Checked before the body is read.
 */
export function imageGate(ctx: AppContext) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const by = imageGenerationOffBy(ctx, req.auth!.org);
    if (by) return next(imageErrors.disabled(by));
    next();
  };
}

/** Who has image generation switched off for this org right now (the operator first), if anyone. */
export function imageGenerationOffBy(ctx: AppContext, org: OrgContext): 'operator' | 'organization' | undefined {
  if (ctx.switches.engaged('image_generation')) return 'operator';
  if (capabilityPolicy(org, 'image_generation') === 'off') return 'organization';
  return undefined;
}
