import type { Request, Response } from 'express';
import type { AppContext } from '../context';
import type { ImageJob, ImageJobResult } from '../../shared/queues/payloads';
import type { ResolvedModel } from '../../shared/catalog/catalog';
import { laneFor, laneLimit } from '../../shared/lanes/policy';
import { imageErrors } from '../../shared/images/errors';
import { runJob } from './run-job';
import { taskRoute, withRouteHeaders } from './route';
import { targetOf } from './target';
import { resolveRequestedModel } from './chat';
import { limitsFor } from './limits';
import { isGptImageName } from '../../shared/images/gpt-image';

/** Resolves an image-capable model (routing-plan aliases first; `-background` marks background work). */
export async function resolveImageModel(ctx: AppContext, req: Request, requested: string): Promise<ResolvedModel> {
  const resolved = await resolveRequestedModel(ctx, req, requested);
  if (!resolved.model.capabilities.image_generation) throw imageErrors.notImageCapable(requested);
  return resolved;
}

/**
 * A model whose upstream is one of OpenAI's GPT image models: as the catalog declares it
 * (`config.image_config.send_response_format: false`), or when every deployment of its pool names
 * one (`gpt-image-1`, ...: isGptImageName; the worker leaves `response_format` out for each such
 * deployment of a mixed pool too). Such an upstream refuses `response_format` (400
 * `unknown_parameter`) and always answers base64 (OpenAI: "GPT image models ... always return
 * base64-encoded images").
 */
export function isGptImageKind(m: ResolvedModel['model']): boolean {
  if ((m.config.image_config as { send_response_format?: boolean } | undefined)?.send_response_format === false) return true;
  return m.deployments.length > 0 && m.deployments.every((d) => isGptImageName(d.upstream));
}

/**
 * OpenAI refuses `response_format` on its GPT image models (400 `unknown_parameter`, "Unknown
 * parameter: 'response_format'.", `param: "response_format"`: the openapi.json's CreateImageRequest
 * "is not supported for the GPT image models, which always return base64-encoded images"), so the
 * gateway refuses it on such a model too, naming it, before any lane; the answer carries `b64_json`
 * and the gateway's `url` anyway.
 */
export function refuseResponseFormat(responseFormat: string | undefined, m: ResolvedModel['model'], requested: string): void {
  if (responseFormat === undefined || !isGptImageKind(m)) return;
  throw imageErrors.unsupportedParameter(`Unknown parameter: 'response_format'. The model '${requested}' is a GPT image model, which takes no 'response_format' and always answers base64 ('b64_json', with the gateway's 'url').`, 'response_format');
}

/**
 * Whether the answer carries `b64_json`: when asked for, and always on a GPT image model, whose
 * clients read `data[].b64_json` without asking (OpenAI's own example for them does; they cannot ask,
 * refuseResponseFormat); `url` is always there, and `response_format: "url"` leaves the bytes out on
 * any other model.
 */
export function answersB64(responseFormat: string | undefined, m: ResolvedModel['model']): boolean {
  return responseFormat === 'b64_json' || (responseFormat === undefined && isGptImageKind(m));
}

export interface ImageDispatch {
  resolved: ResolvedModel;
  operation: ImageJob['operation'];
  params: Record<string, unknown>;
  sources: ImageJob['sources'];
  /** An edit's mask (for the first source), already checked against it. */
  mask?: ImageJob['mask'];
  size: string;
  /** The job's id when one request runs several image jobs (MCP tool calls of a batch); else the request id. */
  jobId?: string;
  /** Cancels the job besides the client's disconnect (an MCP tool call's cancel). */
  signal?: AbortSignal;
}

/**
 * Runs one image request through the images pool: the interactive lane, or the background lane for
 * a `-background` model id from an entitled org. The lease is taken in pool `images`.
 */
export async function dispatchImages(ctx: AppContext, req: Request, res: Response, d: ImageDispatch): Promise<ImageJobResult> {
  const auth = req.auth!;
  const lane = laneFor(auth.org, d.resolved.background);
  const m = d.resolved.model;
  const priceKey = m.prices[`image_${d.size}`] !== undefined ? `image_${d.size}` : 'image';
  const result = await runJob(ctx, req, res, {
    queue: lane === 'background' ? 'images-background' : 'images-interactive',
    pool: 'images',
    lane,
    jobId: d.jobId,
    signal: d.signal,
    limit: laneLimit(auth.org, 'images', lane),
    overLimit: (s) => imageErrors.lanesExhausted(s),
    publicModel: d.resolved.requestedId,
    reserve: limitsFor(ctx, req, m, async () => ({ input: 0, output: 0, fixedMicros: (typeof d.params.n === 'number' ? d.params.n : 1) * (m.prices[priceKey] ?? 0) })),
    data: {
      operation: d.operation,
      target: targetOf(m),
      // the model's pool of deployments (route.ts): balanced, retried and failed over by the worker
      route: taskRoute(m, d.operation === 'generate' ? 'image_generation' : 'image_edit'),
      params: d.params,
      sources: d.sources,
      mask: d.mask,
      priceKey,
      unitPrice: m.prices[priceKey] ?? 0,
      sendResponseFormat: !isGptImageKind(m),
    },
  });
  return withRouteHeaders(res, result) as ImageJobResult;
}
