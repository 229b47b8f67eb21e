import Joi from 'joi';
import type { CatalogModel } from '../catalog/catalog';

/** A transcription model's published limits (`models.config.audio_config`). */
export interface AudioConfig {
  max_duration_seconds: number;
  supports_word_timestamps: boolean;
}

const schema = Joi.object({
  max_duration_seconds: Joi.number().integer().min(1).max(3600).required(),
  supports_word_timestamps: Joi.boolean().required(),
}).unknown(true);

/** The model's `audio_config` when it is transcription-capable and the config is valid; else undefined. */
export function audioConfigOf(m: CatalogModel): AudioConfig | undefined {
  if (!m.capabilities.transcription) return undefined;
  const raw = (m.config as { audio_config?: unknown }).audio_config;
  const { error, value } = schema.validate(raw, { convert: false });
  if (error || !value) return undefined;
  return { max_duration_seconds: value.max_duration_seconds, supports_word_timestamps: value.supports_word_timestamps };
}
