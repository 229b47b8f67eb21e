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
 * An edit's mask as the caller sent it: OpenAI's multipart `mask` file (one), or, in a JSON edit (or
 * a multipart one's text field), `mask_id` naming a stored image as `image_id` does. A text `mask`
 * (JSON has no files) and both forms at once are refused, naming `mask`.
 */
export function maskFileOf(files: Express.Multer.File[], raw: Record<string, unknown>, multipart: boolean): Express.Multer.File | undefined {
  const masks = files.filter((f) => f.fieldname === 'mask');
  if (masks.length > 1) throw new ApiError(400, 'invalid_request', "Send at most one 'mask' file.", { param: 'mask' });
  if (raw.mask != null) {
    throw new ApiError(400, 'invalid_request', multipart ? "'mask' must be a file part (a PNG)." : "'mask' is a file of OpenAI's multipart form; a JSON edit names a stored mask with 'mask_id'.", { param: 'mask' });
  }
  if (masks.length && raw.mask_id != null) throw new ApiError(400, 'invalid_request', "Send a 'mask' file or a 'mask_id', not both.", { param: 'mask' });
  return masks[0];
}

/**
 * A mask reaches the upstream only through OpenAI's edits API (multipart `mask`), the only edit
 * adapter (TASK_KINDS.image_edit): a model with no deployment of such a kind refuses it here, before
 * any lane, storage or billing. A mixed pool's edits go to those deployments only (taskRoute).
 */
export function refuseMaskUpstream(m: CatalogModel, requested: string): void {
  const kinds = TASK_KINDS.image_edit;
  if (m.deployments.some((d) => kinds.has(d.provider.kind))) return;
  const theirs = [...new Set(m.deployments.map((d) => d.provider.kind))].join(', ');
  throw imageErrors.unsupportedParameter(`The model '${requested}' cannot take a 'mask': its upstream (kind ${theirs}) has no masked edits; use a model on an OpenAI-compatible upstream.`, 'mask');
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

/**
 * Checks the mask against the first image and gives the job its reference. A mask file is stored as
 * an upload of the org first (the worker reads it from storage, as it reads the images), and returned
 * as `stored` for the caller to delete once the edit ends: it is not one of the edit's sources.
 */
export async function takeMask(req: Request, first: { width: number; height: number }, file: Express.Multer.File | undefined, named: Image | undefined): Promise<{ ref?: MaskRef; stored?: Image }> {
  if (file) {
    const bytes = await namingBytes('mask', () => takeSpooled(req, file));
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
