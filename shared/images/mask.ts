import FileType from 'file-type';
import type sharpT from 'sharp';
import { ApiError } from '../errors/ApiError';
import { imageErrors } from './errors';
import { loadSharp, MAX_SIDE } from './inspect';

/**
 * OpenAI's refusal of a mask (its code and the start of its message, as its API answers them:
 * "Invalid mask image format - mask image missing alpha channel"), naming `mask`.
 */
const invalidMask = (why: string) => new ApiError(400, 'invalid_mask_image_format', `Invalid mask image format - ${why}`, { param: 'mask' });

/**
 * OpenAI's rules for an edit's `mask` (CreateImageEditRequest: "Must be a valid PNG file ... and have
 * the same dimensions as `image`"; its fully transparent areas say where to edit, so it needs an alpha
 * channel), checked against the first image (the one it applies to). Reads the PNG's header only
 * (`sharp`); the pixels are decoded when it is stored, as any upload's.
 */
export async function checkMask(bytes: Buffer, first: { width: number; height: number }): Promise<void> {
  const type = await FileType.fromBuffer(bytes).catch(() => undefined);
  if (type?.mime !== 'image/png') throw invalidMask('mask must be a PNG file.');
  let meta: sharpT.Metadata;
  try {
    meta = await loadSharp()(bytes, { limitInputPixels: MAX_SIDE * MAX_SIDE }).metadata();
  } catch {
    const bad = imageErrors.invalidImage();
    throw new ApiError(bad.status, bad.code, bad.message, { param: 'mask' });
  }
  if (!meta.hasAlpha) throw invalidMask('mask image missing alpha channel.');
  if (meta.width !== first.width || meta.height !== first.height) {
    throw invalidMask(`mask size does not match image size (the mask is ${meta.width}x${meta.height}, the first image ${first.width}x${first.height}).`);
  }
}
