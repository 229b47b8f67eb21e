import { ApiError } from '../errors/ApiError';

/**
 * The image endpoints' own codes (docs/images.md lists them all). A refusal of one request field
 * names it in `param` (OpenAI's ErrorResponse, as the schema's own refusals already do).
 */
export const imageErrors = {
  disabled: (by: 'operator' | 'organization') =>
    new ApiError(
      503,
      'image_generation_disabled',
      by === 'operator' ? 'Image generation is switched off by the operator for now; retry later.' : 'Image generation is switched off for this organization.',
      { retryAfter: 30 },
    ),
  notFound: (id: string) => new ApiError(404, 'image_not_found', `No image '${id}' (it may have expired).`),
  notImageCapable: (model: string) => new ApiError(400, 'model_not_image_capable', `The model '${model}' does not generate images.`, { param: 'model' }),
  unknownField: (field: string) => new ApiError(400, 'unknown_field', `Unknown field '${field}'.`, { param: field }),
  unsupportedParameter: (message: string, param?: string) => new ApiError(400, 'unsupported_parameter', message, { param }),
  unsupportedSize: (size: string, sizes: string[]) =>
    new ApiError(400, 'unsupported_size', `Size '${size}' is not supported by this model; use one of ${sizes.join(', ')}.`, { param: 'size' }),
  invalidSteps: (min: number, max: number) => new ApiError(400, 'invalid_steps', `'steps' must be an integer from ${min} to ${max}.`, { param: 'steps' }),
  invalidGuidance: (min: number, max: number) => new ApiError(400, 'invalid_guidance', `'guidance' must be a number from ${min} to ${max}.`, { param: 'guidance' }),
  unsupportedFormat: (format: string, formats: string[]) =>
    new ApiError(400, 'unsupported_output_format', `Output format '${format}' is not supported; use one of ${formats.join(', ')}.`, { param: 'output_format' }),
  transparentJpeg: () =>
    new ApiError(400, 'invalid_request', "'background' 'transparent' needs 'output_format' png or webp (JPEG has no transparency).", { param: 'background' }),
  invalidN: (max: number) => new ApiError(400, 'invalid_n', `'n' must be an integer from 1 to ${max}.`, { param: 'n' }),
  promptTooLong: (field: string, max: number) => new ApiError(400, 'prompt_too_long', `'${field}' is longer than ${max} characters.`, { param: field }),
  lanesExhausted: (retryAfter: number) =>
    new ApiError(429, 'image_lanes_exhausted', 'Too many concurrent image requests for this organization; retry shortly.', { retryAfter }),
  urlNotAllowed: (message: string) => new ApiError(400, 'url_not_allowed', message, { param: 'url' }),
  fetchFailed: (message: string) => new ApiError(400, 'image_fetch_failed', message, { param: 'url' }),
  tooLarge: (max: number) => new ApiError(413, 'image_too_large', `The image is larger than ${max} bytes.`),
  unsupportedType: () => new ApiError(400, 'unsupported_image_type', 'The file is not a PNG, JPEG or WebP image.'),
  invalidImage: () => new ApiError(400, 'invalid_image', 'The image could not be decoded.'),
  invalidSignature: () => new ApiError(403, 'invalid_signature', 'The signature of this URL is not valid.'),
  signatureExpired: () => new ApiError(403, 'signature_expired', 'This signed URL has expired; request the content again.'),
};

/** Refusals of an image's bytes (size, type, decoding), which the part or field that carried them causes. */
const BYTES_REFUSALS = new Set(['image_too_large', 'unsupported_image_type', 'invalid_image']);

/** Refusals of a URL to fetch (the SSRF guard's, the fetch's), named `url` where they are made. */
const URL_REFUSALS = new Set(['url_not_allowed', 'image_fetch_failed']);

/**
 * Runs `fn`, and a refusal of the image bytes it read names the part or field that carried them in
 * `param` (`image`, `image[]`, `file`, `url`, `b64_json`, an edit's `images[0].image_url`), as OpenAI
 * names `image` for a bad file; so does a refusal of the URL they were fetched from.
 */
export async function namingBytes<T>(param: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const renamed = (err.param === undefined && BYTES_REFUSALS.has(err.code)) || (err.param === 'url' && URL_REFUSALS.has(err.code));
    if (!renamed) throw err;
    throw new ApiError(err.status, err.code, err.message, { headers: err.headers, details: err.details, param });
  }
}
