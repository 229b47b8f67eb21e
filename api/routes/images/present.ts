import type { Request } from 'express';
import { config } from '../../../shared/config/env';
import { imageStorage } from '../../../shared/storage';
import type { ImageJobResult } from '../../../shared/queues/payloads';

/** The gateway's public base URL: PUBLIC_BASE_URL, else the request's own scheme and host. */
export function baseUrl(req: Request): string {
  return config().publicBaseUrl ?? `${req.protocol}://${req.get('host')}`;
}

/**
 * OpenAI's images response: `created` and `data[]`, each item with the gateway's image `id`, its
 * `url` (`GET /v1/images/{id}/content`), `expires_at`, and `b64_json` when asked for.
 */
export async function imagesResponse(req: Request, r: ImageJobResult, opts: { model: string; size: string; format: string; b64: boolean }) {
  const base = baseUrl(req);
  const data = await Promise.all(
    r.images.map(async ({ id, storageKey, expiresAt }) => {
      const item: Record<string, unknown> = { id, url: `${base}/v1/images/${id}/content`, expires_at: expiresAt };
      if (opts.b64) item.b64_json = (await imageStorage().get(storageKey))?.toString('base64');
      return item;
    }),
  );
  return { created: r.created, data, model: opts.model, size: opts.size, output_format: opts.format };
}
