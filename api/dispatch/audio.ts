import type { Request, Response } from 'express';
import type { AppContext } from '../context';
import type { AudioJob } from '../../shared/queues/payloads';
import type { CatalogModel } from '../../shared/catalog/catalog';
import { laneLimit } from '../../shared/lanes/policy';
import { audioErrors } from '../../shared/audio/errors';
import { audioConfigOf, type AudioConfig } from '../../shared/audio/audio-config';
import { unsealTranscript, type Transcript } from '../../shared/audio/transcript';
import { config } from '../../shared/config/env';
import { runJob } from './run-job';
import { taskRoute, withRouteHeaders } from './route';
import { checkModelAllowed } from '../../shared/limits/controls';
import { audioLimits } from './limits';

/** Audio has one lane; an org's allowance is `laneLimits['audio:default']` (plan, org override). */
export const AUDIO_POOL = 'audio';
export const AUDIO_LANE = 'default';
/** The gateway-wide ceiling is a lease scope of its own, shared by every org. */
const CEILING_SCOPE = 'gateway';

/** A transcription model by the id the caller sent (routing-plan aliases first), or 400 invalid_request. */
export async function resolveTranscriptionModel(ctx: AppContext, req: Request, requested: string): Promise<{ model: CatalogModel; audio: AudioConfig }> {
  const id = req.auth?.modelMap[requested] ?? requested;
  const model = await ctx.catalog.get(id);
  const audio = model && audioConfigOf(model);
  if (!model || !audio) throw audioErrors.invalidRequest("The requested 'model' does not exist or cannot serve transcription.", 'model');
  checkModelAllowed(req.auth?.controls, id, requested);
  return { model, audio };
}

export type AudioDispatch = Omit<AudioJob, keyof import('../../shared/queues/payloads').JobEnvelope>;

/**
 * Runs one transcription through the audio queue: the key's limits (its budgets reserve the model's
 * longest duration at its price, settled from the usage event), the org's audio allowance (429
 * audio_lanes_exhausted), then the gateway-wide ceiling (503 audio_at_capacity), then the job,
 * answered by `deadlineAt` or 504 audio_deadline_exceeded.
 */
export async function dispatchTranscription(
  ctx: AppContext,
  req: Request,
  res: Response,
  model: CatalogModel,
  publicModel: string,
  data: AudioDispatch,
  deadlineAt: number,
): Promise<Transcript> {
  const cfg = config();
  const remaining = deadlineAt - Date.now();
  if (remaining <= 0) throw audioErrors.deadline();
  const result = await runJob(ctx, req, res, {
    queue: 'audio',
    pool: AUDIO_POOL,
    lane: AUDIO_LANE,
    limit: laneLimit(req.auth!.org, AUDIO_POOL, AUDIO_LANE, cfg.audioOrgConcurrency),
    overLimit: (s) => audioErrors.lanesExhausted(s),
    alsoAdmit: async () => {
      const g = await ctx.leases.acquire(CEILING_SCOPE, AUDIO_POOL, 'ceiling', cfg.audioMaxConcurrent);
      if (!g.granted) throw audioErrors.atCapacity(g.retryAfterMs / 1000);
      return () => ctx.leases.release(g.lease);
    },
    reserve: audioLimits(ctx, req, model, data.maxDurationSeconds),
    publicModel,
    // the model's pool of deployments (route.ts): balanced, retried and failed over by the worker
    data: Object.assign({ route: taskRoute(model, 'transcription') }, data),
    timeoutMs: remaining,
    timeoutError: audioErrors.deadline,
  });
  return unsealTranscript(withRouteHeaders(res, result));
}
