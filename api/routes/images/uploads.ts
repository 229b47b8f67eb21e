import fs from 'fs';
import type { Request, Response, NextFunction } from 'express';
import multer from 'multer';
import { config } from '../../../shared/config/env';
import { guardedFetch, GuardedFetchError } from '../../../shared/net/ssrf';
import { imageErrors } from '../../../shared/images/errors';
import { saveImage } from '../../../shared/images/store';
import { errors } from '../../../shared/errors/codes';
import { jsonBody } from '../../middleware/body';
import type { Image } from '../../../shared/db/models';

let ca: Buffer | undefined | null = null;
function extraCa(): Buffer | undefined {
  if (ca === null) ca = config().imageFetchCaFile ? fs.readFileSync(config().imageFetchCaFile!) : undefined;
  return ca;
}

/** Downloads a caller's image URL through the SSRF guard; refusals become the documented codes. */
export async function fetchImageUrl(url: string): Promise<Buffer> {
  const cfg = config();
  try {
    const got = await guardedFetch(url, {
      maxBytes: cfg.imageUploadMaxBytes,
      timeoutMs: cfg.imageFetchTimeoutMs,
      allowCidrs: cfg.imageFetchAllowCidrs,
      ca: extraCa(),
      accept: 'image/png, image/jpeg, image/webp',
    });
    return got.body;
  } catch (err) {
    if (!(err instanceof GuardedFetchError)) throw err;
    if (err.kind === 'not_allowed') throw imageErrors.urlNotAllowed(err.message);
    if (err.kind === 'too_large') throw imageErrors.tooLarge(cfg.imageUploadMaxBytes);
    throw imageErrors.fetchFailed(err.message);
  }
}

/** Stores caller bytes as an `upload` image of the caller's org (size and type checked first). */
export function storeUpload(req: Request, bytes: Buffer): Promise<Image> {
  if (bytes.length > config().imageUploadMaxBytes) throw imageErrors.tooLarge(config().imageUploadMaxBytes);
  const auth = req.auth!;
  return saveImage(bytes, { orgId: auth.orgId, projectId: auth.projectId, apiKeyId: auth.keyId, requestId: req.id, source: 'upload', model: null });
}

/** JSON bodies of image routes: room for a base64 image at the upload cap; over it, `image_too_large`. */
export function imageJson() {
  const limit = Math.ceil((config().imageUploadMaxBytes * 4) / 3) + 64 * 1024;
  const parse = jsonBody(limit);
  return (req: Request, res: Response, next: NextFunction) =>
    parse(req, res, (err?: unknown) => {
      if ((err as { type?: string })?.type === 'entity.too.large') return next(imageErrors.tooLarge(config().imageUploadMaxBytes));
      next(err);
    });
}

/**
 * Multipart bodies of image routes (memory storage, capped while reading): files over the upload cap
 * are `image_too_large`; other multipart problems are `invalid_request`. Non-multipart requests pass.
 */
export function imageMultipart(maxFiles: number) {
  const upload = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: config().imageUploadMaxBytes, files: maxFiles, fields: 32, fieldSize: 64 * 1024, parts: maxFiles + 32 },
  }).any();
  return (req: Request, res: Response, next: NextFunction) => {
    if (!req.is('multipart/form-data')) return next();
    upload(req, res, (err?: unknown) => {
      if (!err) return next();
      const code = (err as { code?: string }).code;
      if (code === 'LIMIT_FILE_SIZE') return next(imageErrors.tooLarge(config().imageUploadMaxBytes));
      next(errors.invalidRequest(`Malformed multipart body: ${(err as Error).message}`));
    });
  };
}

/** Multipart text fields as a body object: `name[]` parts become arrays. */
export function multipartFields(req: Request): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries((req.body ?? {}) as Record<string, unknown>)) {
    if (k.endsWith('[]')) out[k.slice(0, -2)] = Array.isArray(v) ? v : [v];
    else out[k] = v;
  }
  return out;
}
