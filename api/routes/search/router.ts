import { Router } from 'express';
import Joi from 'joi';
import type { AppContext } from '../../context';
import { only } from '../only';
import { jsonBody } from '../../middleware/body';
import { requireJson } from '../../middleware/require-json';
import { killSwitch } from '../../middleware/kill-switch';
import { validate } from '../../validate';
import { runSearch, searchCaller, MAX_QUERY_CHARS, queryLengthFits } from '../../dispatch/search';
import { ClientGone } from '../../../shared/errors/ClientGone';

const body = Joi.object({
  query: Joi.string()
    .min(1)
    .custom((v: string, h) => (queryLengthFits(v) ? v : h.error('string.max', { limit: MAX_QUERY_CHARS })))
    .required(),
  provider: Joi.string().min(1).max(255),
  count: Joi.number().integer(),
});

/**
 * `POST /v1/alpha/search`: the gated web search as a plain JSON route (client-side search features).
 * Body `{ query, provider?, count? }`; answer `{ query, provider, results[], usage }` where `usage`
 * says how the search was charged. Same gate, same ledger as the MCP tool; errors use the envelope.
 */
export function searchRouter(ctx: AppContext): Router {
  const r = Router();
  only(r, '/v1/alpha/search', {
    post: [
      killSwitch(ctx.switches, 'web_search'),
      jsonBody('64kb'),
      requireJson,
      async (req, res) => {
        const b = validate<{ query: string; provider?: string; count?: number }>(body, req.body);
        const gone = new AbortController();
        const onClose = () => {
          if (!res.writableFinished) gone.abort(new ClientGone());
        };
        res.on('close', onClose);
        try {
          const out = await runSearch(searchCaller(ctx, req), { kind: 'search', query: b.query, provider: b.provider, count: b.count }, gone.signal);
          if (out.kind !== 'search') throw new Error('search answered a fetch');
          res.json({
            object: 'search_result',
            query: out.query,
            provider: out.provider,
            results: out.results,
            usage: { key_source: out.charge.keySource, charge_class: out.charge.chargeClass, price_micros: out.charge.priceMicros },
          });
        } finally {
          res.off('close', onClose);
        }
      },
    ],
  });
  return r;
}
