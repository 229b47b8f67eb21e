import type { Request, Response } from 'express';
import type { AppContext } from '../../context';
import { audioConfigOf } from '../../../shared/audio/audio-config';
import { AUDIO_LIMITS } from './upload';
import { FORMATS } from './parts';
import { capabilityPolicy } from '../../../shared/policies/capability';
import { modelsForKey } from '../models/key-models';

/**
 * `GET /v1/audio/transcriptions/models`: transcription-capable models whose `audio_config` is
 * valid, with their limits, price per audio second (micro-dollars) and the org's effective policy
 * (`policy`: on/off) and billing (`billing`: included/metered).
 */
export function listTranscriptionModels(ctx: AppContext) {
  return async (req: Request, res: Response) => {
    // the caller's effective policies, as every task listing shows them
    const policy = capabilityPolicy(req.auth!.org, 'audio');
    const billing = capabilityPolicy(req.auth!.org, 'audio_billing');
    const models = await modelsForKey(ctx, req);
    const data = models.flatMap((m) => {
      const audio = audioConfigOf(m);
      if (!audio) return [];
      return [
        {
          id: m.publicId,
          object: 'model' as const,
          owned_by: m.provider.name,
          display_name: m.displayName ?? m.publicId,
          audio_config: { ...audio, max_file_bytes: AUDIO_LIMITS.maxFileBytes, response_formats: FORMATS },
          pricing: typeof m.prices.audio_second === 'number' ? { audio_second: m.prices.audio_second } : {},
          policy,
          billing,
        },
      ];
    });
    res.json({ object: 'list', data });
  };
}
