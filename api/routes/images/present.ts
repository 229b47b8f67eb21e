import type { Request } from 'express';
import { config } from '../../../shared/config/env';
import { imageStorage } from '../../../shared/storage';
import type { ImageJobResult } from '../../../shared/queues/payloads';

/**
 * The gateway's public base URL, from configuration only (PUBLIC_BASE_URL; required in production):
 * a client's Host header never reaches an image URL or a signed redirect.
 */
export function baseUrl(): string {
  return config().publicBaseUrl;
}

/**
 * OpenAI's images response: `created` and `data[]`, each item with the gateway's image `id`, its
 * `url` (`GET /v1/images/{id}/content`), `expires_at`, and `b64_json` when asked for.
 */
export async function imagesResponse(req: Request, r: ImageJobResult, opts: { model: string; size: string; format: string; b64: boolean }) {
  const base = baseUrl();
  const data = await Promise.all(
    r.images.map(async ({ id, storageKey, expiresAt }) => {
      const item: Record<string, unknown> = { id, url: `${base}/v1/images/${id}/content`, expires_at: expiresAt };
      if (opts.b64) item.b64_json = (await imageStorage().get(storageKey))?.toString('base64');
      return item;
    }),
  );
  return { created: r.created, data, model: opts.model, size: opts.size, output_format: opts.format };
}
