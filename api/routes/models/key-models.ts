import type { Request } from 'express';
import type { AppContext } from '../../context';
import type { CatalogModel } from '../../../shared/catalog/catalog';
import { modelAllowed } from '../../../shared/limits/controls';

/**
 * The catalog as the calling key sees it: every model, or only those of its allowed models
 * (docs/keys.md) when it has a list. Every model listing answers from this.
 */
export async function modelsForKey(ctx: AppContext, req: Request): Promise<CatalogModel[]> {
  return (await ctx.catalog.list()).filter((m) => modelAllowed(req.auth?.controls, m.publicId));
}
