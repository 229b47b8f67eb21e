import { Router } from 'express';
import type { AppContext } from '../../context';
import { anthropicModel, openAiModel } from './present';
import { errors } from '../../../shared/errors/codes';
import { only } from '../only';

/**
 * `GET /v1/models`: the global catalog. With an `anthropic-version` header the answer is the
 * messages-dialect list (`data`, `has_more`, `first_id`, `last_id`), otherwise OpenAI's list.
 */
export function modelsRouter(ctx: AppContext): Router {
  const r = Router();
  only(r, '/v1/models', {
    get: async (req, res) => {
      const models = await ctx.catalog.list();
      if (req.headers['anthropic-version']) {
        const data = models.map(anthropicModel);
        res.json({ data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
      } else {
        res.json({ object: 'list', data: models.map(openAiModel) });
      }
    },
  });
  only(r, '/v1/models/:id', {
    get: async (req, res) => {
      const m = await ctx.catalog.get(String(req.params.id));
      if (!m) throw errors.modelNotFound(String(req.params.id));
      res.json(req.headers['anthropic-version'] ? anthropicModel(m) : openAiModel(m));
    },
  });
  return r;
}
