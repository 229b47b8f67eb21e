import type { CatalogModel } from '../../../shared/catalog/catalog';
import { Router } from 'express';
import type { AppContext } from '../../context';
import { anthropicModel, openAiModel } from './present';
import { anthropicPage, lifecyclesOf, newestFirst } from './page';
import { errors } from '../../../shared/errors/codes';
import { only } from '../only';
import { modelsForKey } from './key-models';
import { modelAllowed } from '../../../shared/limits/controls';
import { allNativeMessages, thinkingForms } from '../../dispatch/route';
import { sentAnthropicVersion } from '../../middleware/error-body';

/**
 * `GET /v1/models`: the catalog (only the key's allowed models when it has a list). With an `anthropic-version` header the answer is the
 * messages-dialect list (`data`, `has_more`, `first_id`, `last_id`; newest first, filtered by `lifecycle`), otherwise OpenAI's list.
 * Errors follow the same header (api/middleware/error-body.ts): Anthropic's error types with it, OpenAI's without.
 */
/** A model's messages-dialect entry, with what its deployments do with the messages dialect's fields. */
const anthropicEntry = async (ctx: AppContext, m: CatalogModel) => anthropicModel(m, await allNativeMessages(ctx, m), await thinkingForms(ctx, m));

export function modelsRouter(ctx: AppContext): Router {
  const r = Router();
  only(r, '/v1/models', {
    get: async (req, res) => {
      const models = await modelsForKey(ctx, req);
      if (sentAnthropicVersion(req.headers)) {
        // the native bypass needs the model and its fallbacks Anthropic-native; `thinking` is reported when every deployment is a Claude upstream
        const stages = lifecyclesOf(req.query);
        // Anthropic's order: the most recently released first
        const entries = (await Promise.all(newestFirst(models).map((m) => anthropicEntry(ctx, m)))).filter((e) => stages.includes(e.lifecycle));
        const { data, has_more } = anthropicPage(entries, req.query);
        res.json({ data, has_more, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
      } else {
        res.json({ object: 'list', data: models.map(openAiModel) });
      }
    },
  });
  only(r, '/v1/models/:id', {
    get: async (req, res) => {
      const m = await ctx.catalog.get(String(req.params.id));
      // a model the key may not call is not there for it (as OpenAI answers for a model without access)
      if (!m || !modelAllowed(req.auth?.controls, m.publicId)) throw errors.modelNotFound(String(req.params.id));
      res.json(sentAnthropicVersion(req.headers) ? await anthropicEntry(ctx, m) : openAiModel(m));
    },
  });
  return r;
}
