import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../../context';
import { only } from '../only';
import { imageGate } from './gate';
import { editSchema, editWithFilesSchema, generationSchema, NOTHING_TO_EDIT, uploadSchema, validateImageBody } from './schema';
import { applyLimits, limitsOf, type ImageParams } from './limits';
import { decodeB64, imageJson, imageMultipart, imageUrlBytes, multipartFields, fetchImageUrl, spooledFiles, storeUpload, takeSpooled } from './uploads';
import { baseUrl, imagesResponse } from './present';
import { modelsListing } from './models';
import { maskFileOf, namedMask, refuseEditUpstream, takeMask } from './mask';
import { answersB64, dispatchImages, refuseResponseFormat, resolveImageModel } from '../../dispatch/images';
import { discardImages, findImage, imageRecord } from '../../../shared/images/store';
import { imageErrors, namingBytes } from '../../../shared/images/errors';
import { imageStorage } from '../../../shared/storage';
import { CONTENT_TYPES } from '../../../shared/images/inspect';
import { config } from '../../../shared/config/env';
import { imageNow } from '../../../shared/images/clock';
import { signature } from '../../../shared/images/signing';
import { errors } from '../../../shared/errors/codes';
import { ApiError } from '../../../shared/errors/ApiError';
import type { Image } from '../../../shared/db/models';

/** An image id, as `newImageId()` makes them. */
const IMAGE_ID = /^img_[0-9a-f]{24}$/;

/** OpenAI's ImageRefParam: exactly one of the two (the schema says so). */
type ImageRef = { image_url?: string; file_id?: string };

type EditBody = ImageParams & { model: string; image_ids?: string[]; image_id?: string; images?: ImageRef[]; mask?: ImageRef; mask_id?: string };

/** The file parts of an edit: OpenAI's `image` / `image[]` and `mask`. */
const EDIT_PARTS = new Set(['image', 'image[]', 'mask']);

function bodyObject(req: Request): Record<string, unknown> {
  if (req.is('multipart/form-data')) return multipartFields(req);
  if (!req.is('application/json')) throw errors.unsupportedMediaType('application/json or multipart/form-data');
  if (!req.body || typeof req.body !== 'object' || Array.isArray(req.body)) throw errors.invalidRequest('The request body must be a JSON object.');
  return req.body as Record<string, unknown>;
}

function generations(ctx: AppContext) {
  return async (req: Request, res: Response) => {
    if (!req.is('application/json')) throw errors.unsupportedMediaType('application/json');
    const body = validateImageBody<ImageParams & { model: string }>(generationSchema, bodyObject(req));
    const resolved = await resolveImageModel(ctx, req, body.model);
    refuseResponseFormat(body.response_format, resolved.model, body.model);
    const { upstream, size } = applyLimits(body, limitsOf(resolved.model));
    const result = await dispatchImages(ctx, req, res, { resolved, operation: 'generate', params: upstream, sources: [], size });
    res.json(await imagesResponse(req, result, { model: body.model, size, format: String(upstream.output_format), b64: answersB64(body.response_format, resolved.model) }));
  };
}

/** The caller's org's unexpired image named by `id`; another org's or an expired one is not found (404, never 403). */
async function ownImage(req: Request, id: string): Promise<Image> {
  const img = await findImage(req.auth!.orgId, id);
  if (!img) throw imageErrors.notFound(id);
  return img;
}

/**
 * Edits: JSON naming stored images (`image_ids`, or OpenAI's `images` references: `{file_id}` names a
 * stored image as an id does, `{image_url}` is fetched or decoded and stored as an upload), or
 * OpenAI's multipart form (files are stored as uploads first). Every check, the model's
 * `max_edit_images` and every `file_id` included, comes before any file is read from the spool or
 * any URL fetched; then the files and URLs are read and stored one at a time.
 */
function edits(ctx: AppContext) {
  return async (req: Request, res: Response) => {
    const multipart = req.is('multipart/form-data') === 'multipart/form-data';
    const raw = bodyObject(req);
    const parts = spooledFiles(req);
    const stray = parts.find((f) => !EDIT_PARTS.has(f.fieldname));
    if (stray) throw imageErrors.unknownField(stray.fieldname);
    if (multipart && raw.images != null) throw new ApiError(400, 'invalid_request', "'images' (references) is OpenAI's JSON form; a multipart edit sends 'image' files.", { param: 'images' });
    const maskFile = maskFileOf(parts, raw, multipart);
    const files = parts.filter((f) => f !== maskFile);
    if (files.length && !raw.image_ids && !raw.image_id) raw.image_ids = [];
    // nothing to edit: a missing required field, named as the caller would send it (OpenAI's `image`)
    if (raw.image_ids == null && raw.image_id == null && raw.images == null) throw new ApiError(400, 'invalid_request', NOTHING_TO_EDIT, { param: multipart ? 'image' : 'image_ids' });
    const body = validateImageBody<EditBody>(files.length ? editWithFilesSchema : editSchema, raw, multipart);
    const resolved = await resolveImageModel(ctx, req, body.model);
    refuseEditUpstream(resolved.model, body.model);
    refuseResponseFormat(body.response_format, resolved.model, body.model);
    const lim = limitsOf(resolved.model);
    const ids = body.image_ids ?? (body.image_id ? [body.image_id] : []);
    const refs = body.images ?? [];
    if (ids.length + refs.length + files.length > lim.max_edit_images) {
      throw imageErrors.unsupportedParameter(`This model edits at most ${lim.max_edit_images} image(s) per request.`, files.length ? 'image' : refs.length ? 'images' : 'image_ids');
    }
    const { upstream, size } = applyLimits(body, lim);
    // Every named image (an id, a reference's file_id) must be the caller's org's and unexpired.
    const named: Image[] = [];
    for (const id of ids) named.push(await ownImage(req, id));
    const byFileId = new Map<number, Image>();
    for (const [i, r] of refs.entries()) if (r.file_id !== undefined) byFileId.set(i, await ownImage(req, r.file_id));
    const namedMaskImage = await namedMask(req, body.mask_id ?? body.mask?.file_id);
    const maskUrl = body.mask?.image_url;
    // Uploaded files and fetched URLs are stored as the edit's sources; if the edit then fails they are deleted again.
    const uploaded: Image[] = [];
    let storedMask: Image | undefined;
    let result: Awaited<ReturnType<typeof dispatchImages>>;
    try {
      for (const f of files) uploaded.push(await namingBytes(f.fieldname, async () => storeUpload(req, await takeSpooled(req, f))));
      // OpenAI's references in their order (the mask applies to the first)
      const referenced: Image[] = [];
      for (const [i, r] of refs.entries()) {
        let img = byFileId.get(i);
        if (!img) {
          const param = `images[${i}].image_url`;
          const bytes = await imageUrlBytes(r.image_url!, res, param);
          uploaded.push((img = await namingBytes(param, () => storeUpload(req, bytes))));
        }
        referenced.push(img);
      }
      const inputs = refs.length ? referenced : [...named, ...uploaded];
      // the mask applies to the first image (OpenAI), checked against it before any lane is taken
      const mask = await takeMask(req, inputs[0], { file: maskFile, named: namedMaskImage, url: maskUrl === undefined ? undefined : () => imageUrlBytes(maskUrl, res, 'mask.image_url') });
      storedMask = mask.stored;
      const sources = inputs.map((i) => ({ id: i.id, storageKey: i.storageKey, format: i.format }));
      result = await dispatchImages(ctx, req, res, { resolved, operation: 'edit', params: upstream, sources, mask: mask.ref, size });
    } catch (err) {
      await discardImages(uploaded);
      throw err;
    } finally {
      if (storedMask) await discardImages([storedMask]); // a mask file serves this edit only
    }
    res.json(await imagesResponse(req, result, { model: body.model, size, format: String(upstream.output_format), b64: answersB64(body.response_format, resolved.model) }));
  };
}

/** Uploads: `{url}` (fetched through the SSRF guard), `{b64_json}`, or a multipart `file`. */
async function uploads(req: Request, res: Response) {
  let bytes: Buffer;
  let part: string; // what carried the bytes, named by a refusal of them
  if (req.is('multipart/form-data')) {
    const files = spooledFiles(req);
    const fields = Object.keys(multipartFields(req));
    if (fields.length) throw imageErrors.unknownField(fields[0]);
    const stray = files.find((f) => f.fieldname !== 'file');
    if (stray) throw imageErrors.unknownField(stray.fieldname);
    if (files.length !== 1) throw new ApiError(400, 'invalid_request', "Send exactly one 'file' part.", { param: 'file' });
    part = 'file';
    bytes = await namingBytes(part, () => takeSpooled(req, files[0]));
  } else {
    const body = validateImageBody<{ url?: string; b64_json?: string }>(uploadSchema, bodyObject(req));
    if (body.url !== undefined) {
      part = 'url';
      bytes = await namingBytes(part, () => fetchImageUrl(body.url!, res));
    } else {
      part = 'b64_json';
      bytes = decodeB64(body.b64_json!, part);
    }
  }
  const img = await namingBytes(part, () => storeUpload(req, bytes));
  res.status(201).json(imageRecord(img, baseUrl()));
}

/** The caller's org's unexpired image named by the `:id` path parameter, or 404 `image_not_found`. */
function callerImage(req: Request): Promise<Image> {
  return ownImage(req, String(req.params.id));
}

/** `GET /v1/images/{id}/content`: 302 to a short-lived signed URL (presigned for S3). */
async function content(req: Request, res: Response) {
  const img = await callerImage(req);
  const until = Math.min(imageNow() + config().imageUrlTtlSeconds * 1000, img.expiresAt.getTime());
  const presigned = await imageStorage().presignedUrl(img.storageKey, until, CONTENT_TYPES[img.format]);
  const expires = Math.floor(until / 1000);
  const location = presigned ?? `${baseUrl()}/v1/images/${img.id}/bytes?expires=${expires}&signature=${signature(img.id, expires)}`;
  res.setHeader('Cache-Control', 'no-store');
  res.redirect(302, location);
}

/**
 * The image routes behind authentication. Generation, edits and uploads sit behind the kill switch
 * and the org policy; reading a stored image and listing models do not (nothing is generated).
 */
export function imagesRouter(ctx: AppContext): Router {
  const r = Router();
  const gate = imageGate(ctx);
  only(r, '/v1/images/models', { get: (req, res) => modelsListing(ctx, req, res) });
  only(r, '/v1/images/generations', { post: [gate, imageJson(), generations(ctx)] });
  only(r, '/v1/images/edits', { post: [gate, imageMultipart(16), imageJson(), edits(ctx)] });
  only(r, '/v1/images/uploads', { post: [gate, imageMultipart(1), imageJson(), uploads] });
  // Any other sub-path is not an image id (`img_` + 24 hex): it goes on to the gateway's 404
  // not_found for unknown paths (e.g. `POST /v1/images/variations`), not to these routes' 405.
  r.all(['/v1/images/:id', '/v1/images/:id/content'], (req, _res, next) => next(IMAGE_ID.test(String(req.params.id)) ? undefined : 'router'));
  only(r, '/v1/images/:id', {
    get: async (req, res) => {
      res.json(imageRecord(await callerImage(req), baseUrl()));
    },
  });
  only(r, '/v1/images/:id/content', { get: content });
  return r;
}
