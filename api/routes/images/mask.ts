import type { Request } from 'express';
import type { CatalogModel } from '../../../shared/catalog/catalog';
import type { Image } from '../../../shared/db/models';
import type { ImageJob } from '../../../shared/queues/payloads';
import { ApiError } from '../../../shared/errors/ApiError';
import { imageErrors, namingBytes } from '../../../shared/images/errors';
import { checkMask } from '../../../shared/images/mask';
import { findImage } from '../../../shared/images/store';
import { imageStorage } from '../../../shared/storage';
import { TASK_KINDS } from '../../dispatch/route';
import { storeUpload, takeSpooled } from './uploads';

/**
 * An edit's mask as the caller sent it: OpenAI's multipart `mask` file (one); in a JSON edit, OpenAI's
 * `mask` reference (`{file_id}` or `{image_url}`, EditImageBodyJsonParam; the schema checks its
 * shape), or the gateway's `mask_id` naming a stored image as `image_id` does (a multipart edit may
 * send it as a text field). A multipart text `mask` and two forms at once are refused, naming `mask`.
 */
export function maskFileOf(files: Express.Multer.File[], raw: Record<string, unknown>, multipart: boolean): Express.Multer.File | undefined {
  const masks = files.filter((f) => f.fieldname === 'mask');
  if (masks.length > 1) throw new ApiError(400, 'invalid_request', "Send at most one 'mask' file.", { param: 'mask' });
  if (multipart && raw.mask != null) throw new ApiError(400, 'invalid_request', "'mask' must be a file part (a PNG).", { param: 'mask' });
  if ((masks.length || raw.mask != null) && raw.mask_id != null) throw new ApiError(400, 'invalid_request', "Send a 'mask' or a 'mask_id', not both.", { param: 'mask' });
  return masks[0];
}

/**
 * Edits reach an upstream only through OpenAI's edits API (multipart `image`, `image[]`, `mask`), the
 * only edit adapter (TASK_KINDS.image_edit: kind `openai`). A model with no deployment of such a kind
 * (Azure, whose edits need a GPT image deployment at a 2025 preview or v1 API version, Gemini,
 * Bedrock, ...) cannot edit: refused here, 400 naming `model`, before any file is stored, any lane
 * is taken or anything billed (the worker had no adapter and answered 502 after the lane). A mixed
 * pool's edits, masked or not, go to its `openai` deployments only (taskRoute).
 */
export function canEdit(m: CatalogModel): boolean {
  return m.deployments.some((d) => TASK_KINDS.image_edit.has(d.provider.kind));
}

export function refuseEditUpstream(m: CatalogModel, requested: string): void {
  if (canEdit(m)) return;
  const theirs = [...new Set(m.deployments.map((d) => d.provider.kind))].join(', ');
  throw new ApiError(400, 'invalid_request', `The model '${requested}' cannot edit images: its upstream (kind ${theirs}) has no image edits here; use a model on an OpenAI-compatible upstream.`, { param: 'model' });
}

/** The caller's stored mask named by `mask_id` (another org's or an expired one is not found). */
export async function namedMask(req: Request, id: string | undefined): Promise<Image | undefined> {
  if (id === undefined) return undefined;
  const img = await findImage(req.auth!.orgId, id);
  if (!img) throw imageErrors.notFound(id);
  return img;
}

export type MaskRef = NonNullable<ImageJob['mask']>;

const refOf = (i: Image): MaskRef => ({ id: i.id, storageKey: i.storageKey, format: i.format });

/** Where an edit's mask comes from: a multipart file, the bytes of a `mask.image_url`, or a stored image. */
export interface MaskSource {
  file?: Express.Multer.File;
  /** A JSON `mask: {image_url}`: read (fetched or decoded) only once every other check passed. */
  url?: () => Promise<Buffer>;
  named?: Image;
}

/**
 * Checks the mask against the first image and gives the job its reference. A mask file or URL is
 * stored as an upload of the org first (the worker reads it from storage, as it reads the images),
 * and returned as `stored` for the caller to delete once the edit ends: it is not one of the edit's
 * sources. A stored image (`mask_id`, `mask.file_id`) is kept.
 */
export async function takeMask(req: Request, first: { width: number; height: number }, src: MaskSource): Promise<{ ref?: MaskRef; stored?: Image }> {
  const { file, url, named } = src;
  if (file || url) {
    const bytes = file ? await namingBytes('mask', () => takeSpooled(req, file)) : await url!();
    await checkMask(bytes, first);
    const stored = await namingBytes('mask', () => storeUpload(req, bytes));
    return { ref: refOf(stored), stored };
  }
  if (!named) return {};
  const bytes = await imageStorage().get(named.storageKey);
  if (!bytes) throw imageErrors.notFound(named.id);
  await checkMask(bytes, first);
  return { ref: refOf(named) };
}
