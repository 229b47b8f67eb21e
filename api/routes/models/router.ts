import { Router } from 'express';
import type { AppContext } from '../../context';
import { anthropicModel, openAiModel } from './present';
import { anthropicPage } from './page';
import { errors } from '../../../shared/errors/codes';
import { only } from '../only';
import { modelsForKey } from './key-models';
import { modelAllowed } from '../../../shared/limits/controls';
import { allNativeMessages } from '../../dispatch/route';

/**
 * `GET /v1/models`: the catalog (only the key's allowed models when it has a list). With an `anthropic-version` header the answer is the
 * messages-dialect list (`data`, `has_more`, `first_id`, `last_id`), otherwise OpenAI's list.
 */
export function modelsRouter(ctx: AppContext): Router {
  const r = Router();
  only(r, '/v1/models', {
    get: async (req, res) => {
      const models = await modelsForKey(ctx, req);
      if (req.headers['anthropic-version']) {
        // the native bypass needs the model and its fallbacks Anthropic-native; `thinking` is reported as surely honoured only then
        const entries = await Promise.all(models.map(async (m) => anthropicModel(m, await allNativeMessages(ctx, m))));
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
      res.json(req.headers['anthropic-version'] ? anthropicModel(m, await allNativeMessages(ctx, m)) : openAiModel(m));
    },
  });
  return r;
}
