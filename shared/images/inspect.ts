import FileType from 'file-type';
import type sharpT from 'sharp';

/** libvips is loaded with the first image inspected, not at a pod's start (about 18 MB). */
let sharpLib: typeof sharpT | undefined;
/** libvips itself; a library that cannot load is the gateway's fault (500), never the image's. */
export function loadSharp(): typeof sharpT {
  sharpLib ??= require('sharp') as typeof sharpT;
  return sharpLib;
}
import { imageErrors } from './errors';
import type { ImageFormat } from '../db/models/Image';

export interface ImageInfo {
  format: ImageFormat;
  width: number;
  height: number;
}

const BY_MIME: Record<string, ImageFormat> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/webp': 'webp' };
export const CONTENT_TYPES: Record<ImageFormat, string> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' };

/** Largest width or height accepted from any source (decoding bombs stop here). */
export const MAX_SIDE = 8192;

/**
 * What an image really is: the type from its magic bytes (never from a name or a header), the
 * dimensions from its header, and then every pixel decoded (in libvips' threads, streaming) so a
 * truncated or corrupt image is refused too (400 `invalid_image`), not only a bad header. Anything
 * but PNG, JPEG or WebP is refused.
 */
export async function inspectImage(bytes: Buffer): Promise<ImageInfo> {
  let type: Awaited<ReturnType<typeof FileType.fromBuffer>>;
  try {
    type = await FileType.fromBuffer(bytes);
  } catch {
    // file-type throws (EndOfStreamError) on a known signature cut short, e.g. a PNG's 8 bytes and no chunk
    throw imageErrors.invalidImage();
  }
  const format = type ? BY_MIME[type.mime] : undefined;
  if (!format) throw imageErrors.unsupportedType();
  const sharp = loadSharp();
  let meta: sharpT.Metadata;
  try {
    meta = await sharp(bytes, { limitInputPixels: MAX_SIDE * MAX_SIDE }).metadata();
  } catch {
    throw imageErrors.invalidImage();
  }
  if (!meta.width || !meta.height || meta.width > MAX_SIDE || meta.height > MAX_SIDE) throw imageErrors.invalidImage();
  try {
    await sharp(bytes, { limitInputPixels: MAX_SIDE * MAX_SIDE, failOn: 'truncated' }).stats();
  } catch {
    throw imageErrors.invalidImage();
  }
  return { format, width: meta.width, height: meta.height };
}
