import type { Worker } from 'bullmq';
import { createWorker } from '../../shared/queues/create-worker';
import { createImage } from '../providers/openai/createImage';
import { editImage, type EditInput } from '../providers/openai/editImage';
import { createImage as azureCreateImage } from '../providers/azure/createImage';
import { platformCredential } from '../credentials';
import { config } from '../../shared/config/env';
import { imageStorage } from '../../shared/storage';
import { discardImages, saveImage } from '../../shared/images/store';
import { CONTENT_TYPES } from '../../shared/images/inspect';
import { ApiError } from '../../shared/errors/ApiError';
import { errors } from '../../shared/errors/codes';
import { imageErrors } from '../../shared/images/errors';
import { isGptImageName } from '../../shared/images/gpt-image';
import type { WorkerRuntime } from '../runtime';
import type { UpstreamImages } from '../providers/openai/images';
import type { ImageJob, ImageJobResult } from '../../shared/queues/payloads';
import type { Image, ImageFormat } from '../../shared/db/models/Image';
import type { CancelSignal } from '../../shared/cancel-source';
import type { UpstreamTarget } from '../../shared/queues/payloads';
import { NO_TOKENS, routeTask } from '../routing/route-request';
import { poolState } from '../routing/pool-state';
import { ROUTE_RESULT_KEY } from '../../shared/queues/route-meta';


/** One upstream attempt of the job on deployment `t` (the pool's router picks it, workers/routing). */
async function callUpstream(job: ImageJob, t: UpstreamTarget, signal: CancelSignal): Promise<UpstreamImages> {
  const generationOnly = t.kind === 'azure' && job.operation === 'generate'; // Azure: generations only (docs/providers/azure.md)
  if (t.kind !== 'openai' && !generationOnly) throw new ApiError(502, 'upstream_unsupported', `No images ${job.operation} adapter for upstream kind '${t.kind}'.`);
  // the pool's router retries (workers/routing): a failure is seen, counted and cooled down there
  const call = { baseUrl: t.baseUrl, settings: t.settings, apiKey: await platformCredential(t.providerId), upstreamModel: t.upstreamModel, signal, deadline: job.deadline, retries: 0 };
  // a GPT image model refuses `response_format` (400 unknown_parameter): never sent to a deployment naming one
  const sendResponseFormat = job.sendResponseFormat && !isGptImageName(t.upstreamModel);
  if (job.operation === 'generate') return (t.kind === 'azure' ? azureCreateImage : createImage)(call, job.params, sendResponseFormat);
  const storage = imageStorage();
  const read = async (s: ImageJob['sources'][number]): Promise<EditInput> => {
    const bytes = await storage.get(s.storageKey);
    if (!bytes) throw imageErrors.notFound(s.id);
    return { bytes, contentType: CONTENT_TYPES[s.format as ImageFormat], filename: `${s.id}.${s.format}` };
  };
  const inputs = await Promise.all(job.sources.map(read));
  // the mask (checked at the edge against the first image) goes as OpenAI's multipart `mask`
  return editImage(call, job.params, inputs, sendResponseFormat, job.mask ? await read(job.mask) : undefined);
}

/**
 * The images pool: both lanes, each with its own concurrency. A job calls the upstream, stores every
 * image it returns (type and size read from the bytes), then states one usage event for the request,
 * which goes into the usage outbox with the result publish. When one image cannot be stored, those
 * stored before it are deleted again: a failed request keeps nothing.
 */
export function startImagesWorkers(rt: WorkerRuntime): Worker[] {
  const cfg = config();
  const lanes = [
    ['images-interactive', cfg.imagesInteractiveConcurrency],
    ['images-background', cfg.imagesBackgroundConcurrency],
  ] as const;
  const state = poolState(rt);
  return lanes.map(([queue, concurrency]) =>
    createWorker(rt, queue, concurrency, async (job, ctx): Promise<ImageJobResult> => {
      const d = job.data;
      // the model's pool: balanced, cooled down and retried on another deployment before any image came back
      const routed = await routeTask(state, d, ctx, async (dep) => ({ produced: await callUpstream(d, dep, ctx.signal), usage: NO_TOKENS }));
      const { produced } = routed.outcome;
      const saved: Image[] = [];
      try {
        for (const { bytes } of produced.images) {
          saved.push(
            await saveImage(bytes, {
              orgId: d.orgId,
              projectId: d.projectId,
              apiKeyId: d.apiKeyId,
              requestId: d.requestId,
              source: d.operation === 'generate' ? 'generation' : 'edit',
              model: d.publicModel,
              sourceImageIds: d.sources.map((s) => s.id),
              seed: typeof d.params.seed === 'number' ? d.params.seed : null,
            }),
          );
        }
      } catch (err) {
        await discardImages(saved); // the request fails: the images stored before the bad one go too
        if (err instanceof ApiError && err.status === 400) throw errors.upstreamError('The upstream answered with data that is not a PNG, JPEG or WebP image.');
        throw err;
      }
      ctx.usage('image', {
        units: { [d.priceKey]: saved.length, cost_micros: saved.length * d.unitPrice },
        deployment: routed.deployment,
      });
      return {
        [ROUTE_RESULT_KEY]: routed.meta,
        created: Math.floor(saved[0].createdAt.getTime() / 1000),
        images: saved.map((s, i) => ({ id: s.id, storageKey: s.storageKey, expiresAt: Math.floor(s.expiresAt.getTime() / 1000), revisedPrompt: produced.images[i].revisedPrompt })),
        size: `${saved[0].width}x${saved[0].height}`,
        usage: produced.usage,
        quality: produced.quality,
        background: produced.background,
      };
    }),
  );
}
