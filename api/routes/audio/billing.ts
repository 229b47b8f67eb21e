import type { Request } from 'express';
import type { CatalogModel } from '../../../shared/catalog/catalog';
import { capabilityPolicy } from '../../../shared/policies/capability';
import { ApiError } from '../../../shared/errors/ApiError';
import { reserve, release, settle } from '../../../shared/billing/wallet';
import { logger } from '../../../shared/logger';

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
