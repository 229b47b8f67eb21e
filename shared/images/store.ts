import crypto from 'crypto';
import { Op } from 'sequelize';
import { Image, type ImageSource } from '../db/models/Image';
import { imageStorage } from '../storage';
import { CONTENT_TYPES, inspectImage } from './inspect';
import { IMAGE_RETENTION_MS, imageNow } from './clock';

export function newImageId(): string {
  return `img_${crypto.randomBytes(12).toString('hex')}`;
}

export interface NewImage {
  orgId: string;
  projectId: string | null;
  apiKeyId: string | null;
  requestId: string;
  source: ImageSource;
  model: string | null;
  sourceImageIds?: string[];
  seed?: number | null;
}

/**
 * Stores bytes and their row. The type and size come from the bytes themselves. Bytes are written
 * first; a failed insert deletes them, so a row never points at nothing.
 */
export async function saveImage(bytes: Buffer, meta: NewImage): Promise<Image> {
  const info = await inspectImage(bytes);
  const id = newImageId();
  const storageKey = `${id}.${info.format}`;
  const storage = imageStorage();
  await storage.put(storageKey, bytes, CONTENT_TYPES[info.format]);
  const now = imageNow();
  try {
    return await Image.create({
      id,
      ...meta,
      sourceImageIds: meta.sourceImageIds ?? [],
      seed: meta.seed ?? null,
      format: info.format,
      width: info.width,
      height: info.height,
      bytes: bytes.length,
      storageKey,
      createdAt: new Date(now),
      expiresAt: new Date(now + IMAGE_RETENTION_MS),
    });
  } catch (err) {
    await storage.delete(storageKey).catch(() => undefined);
    throw err;
  }
}

/** An unexpired image matching `where` (an expired id never resolves, swept or not). */
function findUnexpired(where: { id: string; orgId?: string }): Promise<Image | null> {
  if (!/^img_[0-9a-f]{24}$/.test(where.id)) return Promise.resolve(null);
  return Image.findOne({ where: { ...where, expiresAt: { [Op.gt]: new Date(imageNow()) } } });
}

/** The org's image, if it exists and has not expired. */
export function findImage(orgId: string, id: string): Promise<Image | null> {
  return findUnexpired({ id, orgId });
}

/** An unexpired image by id alone, for the signed-URL route (the signature is the authority). */
export function findLiveImage(id: string): Promise<Image | null> {
  return findUnexpired({ id });
}

/** The metadata record of `GET /v1/images/{id}` (fields documented in docs/images.md). */
export function imageRecord(img: Image, baseUrl: string) {
  return {
    id: img.id,
    object: 'image' as const,
    created_at: Math.floor(img.createdAt.getTime() / 1000),
    expires_at: Math.floor(img.expiresAt.getTime() / 1000),
    source: img.source,
    model: img.model,
    width: img.width,
    height: img.height,
    size: `${img.width}x${img.height}`,
    format: img.format,
    content_type: CONTENT_TYPES[img.format],
    bytes: img.bytes,
    source_image_ids: img.sourceImageIds,
    seed: img.seed,
    url: `${baseUrl}/v1/images/${img.id}/content`,
  };
}

/**
 * Deletes images: each one's bytes, then, in one statement, the rows of those whose bytes went.
 * An image whose bytes could not be deleted keeps its row (so a later sweep finds it again) and is
 * returned with the error.
 */
export async function deleteImages(images: Image[]): Promise<{ removed: number; failed: Array<{ image: Image; err: unknown }> }> {
  const storage = imageStorage();
  const gone: string[] = [];
  const failed: Array<{ image: Image; err: unknown }> = [];
  for (const image of images) {
    await storage.delete(image.storageKey).then(
      () => gone.push(image.id),
      (err: unknown) => failed.push({ image, err }),
    );
  }
  const removed = gone.length ? await Image.destroy({ where: { id: gone } }) : 0;
  return { removed, failed };
}

/**
 * Deletes every stored image of an organization, bytes first, in batches; used before the
 * organization itself is deleted (its rows would otherwise go by cascade and leave the bytes behind).
 * Throws if some bytes could not be deleted: their rows stay, so a retry finds them again.
 */
export async function purgeOrgImages(orgId: string, batch = 500): Promise<number> {
  let removed = 0;
  for (;;) {
    const rows = await Image.findAll({ where: { orgId }, limit: batch, order: [['id', 'ASC']] });
    if (rows.length === 0) return removed;
    const done = await deleteImages(rows);
    removed += done.removed;
    if (done.failed.length) throw new Error(`could not delete the bytes of ${done.failed.length} image(s)`);
  }
}

/**
 * Deletes images stored during a request that then failed (an edit's uploaded files). Best effort:
 * what cannot be deleted now expires with the rest.
 */
export async function discardImages(images: Image[]): Promise<void> {
  await deleteImages(images).catch(() => undefined);
}
