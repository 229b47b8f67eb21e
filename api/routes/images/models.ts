import type { Request, Response } from 'express';
import { openAiModelHeader } from '../models/present';
import type { AppContext } from '../../context';
import { limitsOf } from './limits';
import { canEdit } from './mask';
import { imageGenerationOffBy } from './gate';
import { capabilityPolicy } from '../../../shared/policies/capability';
import { modelsForKey } from '../models/key-models';

/**
 * `GET /v1/images/models`: image-capable models with their published limits, per-image prices, and
 * the caller's effective policy (`on`/`off`) and the operator switch state (`available`).
 */
export async function modelsListing(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const policy = capabilityPolicy(req.auth!.org, 'image_generation');
  const available = !imageGenerationOffBy(ctx, req.auth!.org);
  const models = (await modelsForKey(ctx, req)).filter((m) => m.capabilities.image_generation);
  res.json({
    object: 'list',
    policy,
    available,
    data: models.map((m) => ({
      ...openAiModelHeader(m),
      limits: limitsOf(m),
      // whether POST /v1/images/edits serves it (an upstream kind with an edit adapter)
      edits: canEdit(m),
      prices: Object.fromEntries(Object.entries(m.prices).filter(([k]) => k === 'image' || k.startsWith('image_'))),
      background_variant: true,
      policy,
    })),
  });
}
