import type { Request, Response } from 'express';
import type { AppContext } from '../../context';
import { audioConfigOf } from '../../../shared/audio/audio-config';
import { AUDIO_LIMITS } from './upload';
import { FORMATS } from './parts';

/**
 * `GET /v1/audio/transcriptions/models`: transcription-capable models whose `audio_config` is
 * valid, with their limits and price per audio second (micro-dollars).
 */
export function listTranscriptionModels(ctx: AppContext) {
  return async (_req: Request, res: Response) => {
    const models = await ctx.catalog.list();
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
        },
      ];
    });
    res.json({ object: 'list', data });
  };
}
