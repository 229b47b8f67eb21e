import type { Request } from 'express';
import type { AppContext } from '../../context';
import type { CatalogModel } from '../../../shared/catalog/catalog';
import { capabilityPolicy } from '../../../shared/policies/capability';
import { ApiError } from '../../../shared/errors/ApiError';
import { reserve, release, settle } from '../../../shared/billing/wallet';
import { logger } from '../../../shared/logger';
import { ClientGone } from '../../../shared/errors/ClientGone';
import { claimHeldUsage, deliveryClaimed } from '../../../shared/metering/usage-outbox';
import { readKeptResult } from '../../../shared/queues/reply-store';
import { unsealTranscript } from '../../../shared/audio/transcript';

export interface AudioCharge {
  mode: 'included' | 'metered';
  /** Charges the seconds transcribed (metered) and lifts the hold. */
  settle(durationSeconds: number): Promise<void>;
  /** Lifts the hold without charging (the transcription did not answer). */
  release(): Promise<void>;
}

const unavailable = () => new ApiError(503, 'audio_billing_unavailable', 'Billing for this audio model is not available right now; try again later.', { retryAfter: 5 });

/**
 * Audio billing by the org's plan policy `audio_billing` (docs/audio.md): included charges nothing;
 * metered holds the model's `audio_second` price times its longest accepted duration before the job
 * (402 `insufficient_credits` / `reservation_too_large` from the wallet), then charges the seconds
 * the backend reported (speech-free audio: 0) and lifts the rest.
 */
export async function holdAudioCharge(req: Request, model: CatalogModel, maxDurationSeconds: number): Promise<AudioCharge> {
  if (capabilityPolicy(req.auth!.org, 'audio_billing') !== 'metered') return { mode: 'included', settle: async () => undefined, release: async () => undefined };
  const price = model.prices?.audio_second;
  if (typeof price !== 'number' || !Number.isFinite(price) || price < 0) {
    logger.error({ model: model.publicId }, 'metered audio model without an audio_second price');
    throw unavailable();
  }
  try {
    await reserve(req.auth!.orgId, req.id, price * maxDurationSeconds);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    logger.warn({ err }, 'wallet unavailable for a transcription');
    throw unavailable();
  }
  return {
    mode: 'metered',
    settle: async (seconds) => void (await settle(req.id, Math.ceil(Math.max(0, seconds) * price))),
    release: async () => void (await release(req.id).catch((e) => logger.error({ err: e, requestId: req.id }, 'reservation release failed'))),
  };
}

/**
 * The charge of a transcription that did not answer its client: the hold is lifted, nothing charged.
 * Unless the client left after the worker had claimed delivery: its usage event is then in the ledger
 * (or held for this pod: billed now, claimHeldUsage), so the wallet is charged the seconds of the
 * answer the worker kept, as it would have been had the client stayed (docs/audio.md).
 */
export async function chargeUnanswered(ctx: AppContext, req: Request, charge: AudioCharge, err: unknown): Promise<void> {
  if (charge.mode === 'metered' && err instanceof ClientGone) {
    const seconds = await claimedSeconds(ctx, req.id).catch((e) => void logger.error({ err: e, requestId: req.id }, 'a claimed transcription could not be read; its hold is released'));
    if (seconds !== undefined) return charge.settle(seconds);
  }
  await charge.release();
}

/** The seconds of a transcription whose delivery its worker claimed (its kept answer), its held usage billed; undefined when the pod gave up first. */
async function claimedSeconds(ctx: AppContext, requestId: string): Promise<number | undefined> {
  const replyTo = ctx.replies.channelFor(requestId);
  if (!(await deliveryClaimed(ctx.redis, replyTo, requestId))) return undefined;
  const kept = await readKeptResult(ctx.redis, replyTo, requestId);
  if (!kept) throw new Error('no kept answer for a claimed transcription');
  const { duration } = unsealTranscript(kept.result);
  await claimHeldUsage(ctx.redis, replyTo, requestId);
  return duration;
}
