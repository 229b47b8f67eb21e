import type { Request } from 'express';
import { config } from '../../../shared/config/env';
import { imageStorage } from '../../../shared/storage';
import type { ImageJobResult } from '../../../shared/queues/payloads';
import { signature } from '../../../shared/images/signing';
import { imageNow } from '../../../shared/images/clock';

/**
 * The gateway's public base URL, from configuration only (PUBLIC_BASE_URL; required in production):
 * a client's Host header never reaches an image URL or a signed redirect.
 */
export function baseUrl(): string {
  return config().publicBaseUrl;
}

/** How long an answer's `url` opens the image without an API key: OpenAI's "valid for 60 minutes". */
export const ANSWER_URL_TTL_S = 3600;

/**
 * An answer's `url`: the image's stable address `GET /v1/images/{id}/content`, signed for
 * ANSWER_URL_TTL_S (never past the image's own expiry), so that, as OpenAI's URLs, it opens with no
 * key for an hour (api/routes/images/signed.ts); with an API key it opens for the image's 7 days.
 */
export function answerUrl(id: string, expiresAtS: number, nowMs = imageNow()): string {
  const expires = Math.min(Math.floor(nowMs / 1000) + ANSWER_URL_TTL_S, expiresAtS);
  return `${baseUrl()}/v1/images/${id}/content?expires=${expires}&signature=${signature(id, expires)}`;
}

/**
 * OpenAI's images response: `created` and `data[]`, each item with the gateway's image `id`, its
 * `url` (answerUrl), `expires_at`, `b64_json` when asked for and the upstream's
 * `revised_prompt` when it sent one; `usage`, `quality` and `background` as the upstream sent them.
 * `size` is the requested one, or for `auto` the real size of the first image.
 */
export async function imagesResponse(req: Request, r: ImageJobResult, opts: { model: string; size: string; format: string; b64: boolean }) {
  const data = await Promise.all(
    r.images.map(async ({ id, storageKey, expiresAt, revisedPrompt }) => {
      const item: Record<string, unknown> = { id, url: answerUrl(id, expiresAt), expires_at: expiresAt };
      if (opts.b64) item.b64_json = (await imageStorage().get(storageKey))?.toString('base64');
      if (revisedPrompt !== undefined) item.revised_prompt = revisedPrompt;
      return item;
    }),
  );
  const size = opts.size === 'auto' && r.size ? r.size : opts.size;
  const out: { data: Array<Record<string, unknown>> } & Record<string, unknown> = { created: r.created, data, model: opts.model, size, output_format: opts.format };
  if (r.quality !== undefined) out.quality = r.quality;
  if (r.background !== undefined) out.background = r.background;
  if (r.usage !== undefined) out.usage = r.usage;
  return out;
}
