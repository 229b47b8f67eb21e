import type { Worker } from 'bullmq';
import { createWorker } from '../../shared/queues/create-worker';
import { createTranscription } from '../providers/openai/createTranscription';
import { createTranscription as azureTranscription } from '../providers/azure/createTranscription';
import { platformCredential } from '../credentials';
import { decrypt } from '../../shared/crypto';
import { config } from '../../shared/config/env';
import { logger } from '../../shared/logger';
import { ApiError } from '../../shared/errors/ApiError';
import { audioErrors } from '../../shared/audio/errors';
import { removeSpoolFile, spoolPath, sweepSpool } from '../../shared/audio/spool';
import { isSpeechFree, sealTranscript, speechFree, type Transcript } from '../../shared/audio/transcript';
import type { AudioJob } from '../../shared/queues/payloads';
import type { WorkerRuntime } from '../runtime';
import type { CancelSignal } from '../../shared/cancel-source';
import type { UpstreamTarget } from '../../shared/queues/payloads';
import { NO_TOKENS, routeTask, type RouterRefusals } from '../routing/route-request';
import { poolState } from '../routing/pool-state';
import { ROUTE_RESULT_KEY } from '../../shared/queues/route-meta';


/** One upstream attempt of the job on deployment `t` (the pool's router picks it, workers/routing). */
async function transcribe(job: AudioJob, t: UpstreamTarget, signal: CancelSignal): Promise<Transcript> {
  if (t.kind !== 'openai' && t.kind !== 'azure') throw audioErrors.backendUnavailable(`No transcription adapter for upstream kind '${t.kind}'.`);
  const apiKey = await platformCredential(t.providerId);
  return (t.kind === 'azure' ? azureTranscription : createTranscription)(
    // the pool's router retries (workers/routing): a failure is seen, counted and cooled down there
    { baseUrl: t.baseUrl, settings: t.settings, apiKey, upstreamModel: t.upstreamModel, signal, deadline: job.deadline, retries: 0 },
    {
      path: spoolPath(job.spoolId),
      uploadName: `audio${job.fileExt ? `.${job.fileExt}` : ''}`,
      contentType: job.contentType,
      language: job.language,
      prompt: job.sealedPrompt ? decrypt(job.sealedPrompt) : undefined,
      temperature: job.temperature,
      words: job.words,
    },
  );
}

/**
 * The pool router's own answers in the audio codes, as the single backend's are: every deployment
 * cooling down after failures is an unavailable backend (502, Retry-After the cooldown left), every
 * one at its rpm/tpm/concurrency limit a backend shedding load (429).
 */
const REFUSALS: RouterRefusals = {
  cooling: (s) => audioErrors.backendUnavailable('Every deployment of this model is cooling down after failures; retry later.', s),
  limited: (s) => audioErrors.backendRateLimited(s, 'Every deployment of this model is at its rate or concurrency limit; back off and retry.'),
};

let sweeper: NodeJS.Timeout | undefined;

/**
 * Spool files outlive their request only when a process died; sweep those now and then: audio
 * uploads, and image file parts the web process spooled while reading an edit or upload (shared/spool).
 */
function startSweeper(maxAgeMs: number): void {
  if (sweeper) return;
  sweeper = setInterval(() => void sweepSpool(maxAgeMs).catch(() => undefined), 60_000);
  sweeper.unref();
}

/**
 * The audio pool. The spool file is deleted when the job ends, however it ends (the pod deletes it
 * too). The backend-reported duration is checked against the model's limit (400 audio_too_long);
 * speech-free audio is answered empty and not metered; otherwise one usage event (modality
 * `audio`, `audio_duration_ms`) goes into the usage outbox with the sealed transcript's publish
 * (nothing after the upstream call charges or commits anything, so no earlier write is needed).
 */
export function startAudioWorkers(rt: WorkerRuntime): Worker[] {
  const cfg = config();
  startSweeper(cfg.audioDeadlineMs + 60_000);
  const state = poolState(rt);
  return [
    createWorker(rt, 'audio', cfg.audioWorkerConcurrency, async (job, ctx) => {
      const d = job.data;
      const started = Date.now();
      try {
        // the model's pool: balanced, cooled down and retried on another deployment before any transcript came back
        const routed = await routeTask(state, Object.assign({ operation: 'transcribe' }, d), ctx, async (dep) => ({ transcript: await transcribe(d, dep, ctx.signal), usage: NO_TOKENS }), REFUSALS);
        let t = routed.outcome.transcript;
        if (t.duration > d.maxDurationSeconds) throw audioErrors.tooLong(d.maxDurationSeconds);
        const durationMs = Math.round(t.duration * 1000);
        if (isSpeechFree(t)) t = speechFree(t);
        else ctx.usage('audio', { units: { audio_duration_ms: durationMs }, deployment: routed.deployment });
        logger.info({ requestId: d.requestId, model: d.publicModel, durationMs, metered: t.duration > 0, ms: Date.now() - started }, 'transcription done');
        // the route for the pod's headers beside the sealed transcript (a field an older pod does not read)
        return Object.assign(sealTranscript(t), d.route ? { [ROUTE_RESULT_KEY]: routed.meta } : {});
      } catch (err) {
        if (err instanceof ApiError && err.code === 'deadline_exceeded') throw audioErrors.deadline();
        if (err instanceof ApiError || ctx.signal.aborted) throw err;
        // Never log an unexpected error's message: it could quote the audio backend's answer.
        logger.error({ requestId: d.requestId, errorName: (err as Error)?.name }, 'transcription failed unexpectedly');
        throw audioErrors.backendUnavailable();
      } finally {
        await removeSpoolFile(spoolPath(d.spoolId)).catch(() => undefined);
      }
    }),
  ];
}
