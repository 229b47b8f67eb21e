import fs from 'fs';
import type { Request, Response, NextFunction } from 'express';
import multer from 'multer';
import { config } from '../../../shared/config/env';
import { fetchImage } from '../../../shared/images/fetch-image';
import { imageErrors, namingBytes } from '../../../shared/images/errors';
import { saveImage } from '../../../shared/images/store';
import { errors } from '../../../shared/errors/codes';
import { ApiError } from '../../../shared/errors/ApiError';
import { jsonBody } from '../../middleware/body';
import { ClientGone } from '../../../shared/errors/ClientGone';
import { removeSpoolFile } from '../../../shared/spool/spool';
import { closeSpool, spoolStorage, type SpoolTracker } from '../spool-storage';
import type { Image } from '../../../shared/db/models';

/**
 * Downloads a caller's image URL through the SSRF guard; refusals become the documented codes. The
 * download stops when the caller leaves (`res` closes unanswered): a client that sends a slow URL and
 * hangs up must not keep the gateway reading it until IMAGE_FETCH_TIMEOUT_MS.
 */
export async function fetchImageUrl(url: string, res: Response): Promise<Buffer> {
  const cfg = config();
  const gone = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) gone.abort(new ClientGone());
  };
  res.on('close', onClose);
  try {
    return await fetchImage(url, { maxBytes: cfg.imageUploadMaxBytes, timeoutMs: cfg.imageFetchTimeoutMs, accept: 'image/png, image/jpeg, image/webp', signal: gone.signal });
  } finally {
    res.off('close', onClose);
  }
}

/** Base64 text (a `data:image/…;base64,` prefix accepted) as bytes; anything else is 400 naming `param`. */
export function decodeB64(text: string, param: string): Buffer {
  const b64 = text.replace(/^data:image\/[a-z]+;base64,/, '');
  if (!/^[A-Za-z0-9+/=\s]+$/.test(b64)) throw new ApiError(400, 'invalid_request', `'${param}' is not base64.`, { param });
  return Buffer.from(b64, 'base64');
}

/**
 * The bytes an OpenAI ImageRefParam's `image_url` names ("A fully qualified URL or base64-encoded data
 * URL"): a `data:image/…;base64,` URL decoded, any other URL fetched through the SSRF guard (https
 * only, public addresses). Refusals name `param` (`images[0].image_url`, `mask.image_url`).
 */
export function imageUrlBytes(url: string, res: Response, param: string): Promise<Buffer> {
  if (/^data:/i.test(url)) {
    if (!/^data:image\/[a-z]+;base64,/.test(url)) return Promise.reject(new ApiError(400, 'invalid_request', `'${param}' is a data URL but not a base64 image ('data:image/png;base64,…').`, { param }));
    return namingBytes(param, async () => decodeB64(url, param));
  }
  return namingBytes(param, () => fetchImageUrl(url, res));
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

const trackers = new WeakMap<Request, SpoolTracker>();

/** File parts of image routes stream to `<id>.image` spool files, never held whole in memory. */
const imageSpool = spoolStorage('image', (req) => trackers.get(req)!);

/**
 * Multipart bodies of image routes: each file part is streamed to the spool (capped while reading;
 * multer's file objects carry `path` and `size`, never `buffer`), text fields are kept. Files over the
 * upload cap are `image_too_large`; other multipart problems are `invalid_request`; a spool that
 * cannot be written is the gateway's 500. Every spool file of the request is deleted when its
 * response ends, however it ends (and at once when the body cannot be read). Non-multipart requests pass.
 */
export function imageMultipart(maxFiles: number) {
  const upload = multer({
    storage: imageSpool,
    limits: { fileSize: config().imageUploadMaxBytes, files: maxFiles, fields: 32, fieldSize: 64 * 1024, parts: maxFiles + 32 },
  }).any();
  return (req: Request, res: Response, next: NextFunction) => {
    if (!req.is('multipart/form-data')) return next();
    const t: SpoolTracker = { spooled: [] };
    trackers.set(req, t);
    res.once('close', () => void closeSpool(t));
    upload(req, res, (err?: unknown) => {
      if (!err) return next();
      void closeSpool(t).then(() => next(multipartError(err, req)));
    });
  };
}

/** multer's and busboy's errors as the image routes' codes. */
function multipartError(err: unknown, req: Request): unknown {
  // the spool could not be written (disk full, directory unusable): the gateway's fault, not the body's
  if (typeof (err as NodeJS.ErrnoException).syscall === 'string') return err;
  if (!req.socket || req.socket.destroyed) return new ClientGone(); // no one left to answer
  const e = err as { code?: string; field?: string };
  if (e.code === 'LIMIT_FILE_SIZE') {
    const tooLarge = imageErrors.tooLarge(config().imageUploadMaxBytes);
    // the file part that crossed the cap, by the name it was sent under (`image`, `image[]`, `file`)
    return e.field ? new ApiError(413, tooLarge.code, tooLarge.message, { param: e.field.slice(0, 64) }) : tooLarge;
  }
  return errors.invalidRequest(`Malformed multipart body: ${(err as Error).message}`);
}

/** The request's multipart file parts, as spooled by `imageMultipart` (none for other bodies). */
export function spooledFiles(req: Request): Express.Multer.File[] {
  return req.is('multipart/form-data') ? ((req.files as Express.Multer.File[]) ?? []) : [];
}

/**
 * Reads one spooled file part into memory and deletes its spool file: callers take a request's files
 * one at a time, so at most one is in memory. A file over the cap is refused before it is read.
 */
export async function takeSpooled(req: Request, file: Express.Multer.File): Promise<Buffer> {
  if (file.size > config().imageUploadMaxBytes) throw imageErrors.tooLarge(config().imageUploadMaxBytes);
  try {
    return await fs.promises.readFile(file.path);
  } catch (err) {
    // the response already ended (the client left) and its spool files were deleted with it
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && req.socket?.destroyed) throw new ClientGone();
    throw err;
  } finally {
    await removeSpoolFile(file.path).catch(() => undefined);
  }
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
