import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../../context';
import { only } from '../only';
import { requireJson } from '../../middleware/require-json';
import { jsonBody } from '../../middleware/body';
import { killSwitch } from '../../middleware/kill-switch';
import { EMBEDDINGS_BODY_BYTES, embeddingLimits, rerankLimits } from '../../../shared/catalog/task-limits';
import { dispatchEmbeddings, embeddingsLaneLimit, hasCohereDeployment, resolveTaskModel } from '../../dispatch/embeddings';
import { targetOf } from '../../dispatch/target';
import { throughCache } from '../../dispatch/response-cache';
import { checkEmbeddingLimits, parseEmbeddings } from './embeddings.schema';
import { checkRerankLimits, parseRerank } from './rerank.schema';
import { embedV2Answer, parseEmbedV2, type EmbedJobAnswer } from './embed-v2.schema';
import { invalid } from './errors';
import { isComputed } from '../../../shared/embeddings/encodings';
import type { EmbedJob, JobEnvelope } from '../../../shared/queues/payloads';
import { embeddingModel, rerankModel, type TaskPolicy } from './models';
import { modelsForKey } from '../models/key-models';

const PATHS = ['/v1/embeddings', '/v1/rerank', '/v2/rerank', '/v2/embed', '/v1/embed'];

function embeddingsHandler(ctx: AppContext) {
  return async (req: Request, res: Response) => {
    const body = parseEmbeddings(req.body as Record<string, unknown>);
    const model = await resolveTaskModel(ctx, req, body.model, 'embeddings');
    const countedTokens = await checkEmbeddingLimits(body, body.model, model.tokenizer, embeddingLimits(model));
    const run = () =>
      dispatchEmbeddings(ctx, req, res, body.model, model, {
        operation: 'embed',
        target: targetOf(model),
        input: body.input,
        encodingFormat: body.encodingFormat,
        dimensions: body.dimensions,
        countedTokens,
      });
    // `SERVICE-CACHE`: the exact-match answer cache, opted into per request (api/dispatch/response-cache.ts)
    const result = (await throughCache(ctx, req, res, req.body, run)) as Record<string, unknown>;
    result.id = req.id; // set on the answer itself, this request's own (a spread's copy gets a hidden class of its own: shared/merged.ts)
    res.json(result);
  };
}

/** Cohere's `POST /v2/embed` (`CohereClientV2.embed`) and `POST /v1/embed` (`CohereClient.embed`): the embeddings job of `/v1/embeddings`, answered in Cohere's shape. */
function embedV2Handler(ctx: AppContext, version: 1 | 2) {
  return async (req: Request, res: Response) => {
    const body = parseEmbedV2(req.body as Record<string, unknown>, version);
    const model = await resolveTaskModel(ctx, req, body.model, 'embeddings');
    // a Cohere deployment computes every type (and alone int8/uint8: such a request is routed to the model's Cohere deployments only)
    const cohere = hasCohereDeployment(model);
    const upstreamOnly = body.embeddingTypes.find((t) => !isComputed(t));
    if (upstreamOnly && !cohere) {
      throw invalid('invalid_input', `'embedding_types' ${JSON.stringify(upstreamOnly)} needs a model served by Cohere (its quantisation is the model's own); '${body.model}' is not. float, base64, binary and ubinary are served for every model.`);
    }
    const countedTokens = await checkEmbeddingLimits(body, body.model, model.tokenizer, embeddingLimits(model), { input: body.inputField, dimensions: 'output_dimension' },
      // Cohere embeds at most `max_tokens` of a text (cutting the rest by `truncate`, or refusing under NONE); nothing is cut here, so a longer text is refused
      body.maxTokens === undefined ? undefined : { field: 'max_tokens', tokens: body.maxTokens });
    const job: Omit<EmbedJob, keyof JobEnvelope> = {
      operation: 'embed',
      target: targetOf(model),
      input: body.input,
      encodingFormat: 'float',
      dimensions: body.dimensions,
      inputType: body.inputType,
      countedTokens,
    };
    // a Cohere upstream computes every type itself; for another the gateway encodes the floats
    if (cohere && body.embeddingTypes.some((t) => t !== 'float')) job.embeddingTypes = body.embeddingTypes;
    const result = (await dispatchEmbeddings(ctx, req, res, body.model, model, job)) as EmbedJobAnswer;
    // `texts` echoes the request's `texts`; an `inputs` request has none (Cohere answers `texts: []` when none were sent)
    res.json(embedV2Answer(req.id, body.inputField === 'texts' ? body.input : [], body.embeddingTypes, result, version, body.typesGiven));
  };
}

function rerankHandler(ctx: AppContext) {
  return async (req: Request, res: Response) => {
    const body = parseRerank(req.body as Record<string, unknown>);
    const model = await resolveTaskModel(ctx, req, body.model, 'rerank');
    const searchUnits = await checkRerankLimits(body, body.model, model.tokenizer, rerankLimits(model));
    const result = (await dispatchEmbeddings(ctx, req, res, body.model, model, {
      operation: 'rerank',
      target: targetOf(model),
      query: body.query,
      documents: body.documents,
      topN: body.topN,
      returnDocuments: body.returnDocuments,
      searchUnits,
      unitPrice: model.prices.search_unit ?? 0,
    })) as Record<string, unknown>;
    res.json({ id: req.id, ...result });
  };
}

function policyOf(req: Request): TaskPolicy {
  return { enabled: true, max_concurrent_requests: embeddingsLaneLimit(req), billing: 'metered' };
}

/**
 * Embeddings and rerank (docs/embeddings.md). Mounted before the shared JSON parser: these routes
 * read their own body with the spec's 2 MiB cap (413 `payload_too_large` while reading). The kill
 * switch answers first on every route, listings included; the routes stay registered.
 * `/v2/rerank` and `/v2/embed` are Cohere's own paths, so `CohereClientV2` pointed at the gateway's root works.
 */
export function embeddingsRouter(ctx: AppContext): Router {
  const r = Router();
  r.use(PATHS, killSwitch(ctx.switches, 'embeddings'), jsonBody(EMBEDDINGS_BODY_BYTES));
  only(r, '/v1/embeddings', { post: [requireJson, embeddingsHandler(ctx)] });
  only(r, '/v1/rerank', { post: [requireJson, rerankHandler(ctx)] });
  only(r, '/v2/rerank', { post: [requireJson, rerankHandler(ctx)] });
  only(r, '/v2/embed', { post: [requireJson, embedV2Handler(ctx, 2)] });
  only(r, '/v1/embed', { post: [requireJson, embedV2Handler(ctx, 1)] });
  only(r, '/v1/embeddings/models', {
    get: async (req, res) => {
      const models = (await modelsForKey(ctx, req)).filter((m) => m.capabilities.embeddings);
      res.json({ object: 'list', data: models.map((m) => embeddingModel(m, policyOf(req))) });
    },
  });
  only(r, '/v1/rerank/models', {
    get: async (req, res) => {
      const models = (await modelsForKey(ctx, req)).filter((m) => m.capabilities.rerank);
      res.json({ object: 'list', data: models.map((m) => rerankModel(m, policyOf(req))) });
    },
  });
  return r;
}
