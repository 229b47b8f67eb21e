import Joi from 'joi';
import { validate } from '../../validate';
import { imageErrors } from '../../../shared/images/errors';

/** `WxH`, or OpenAI's `auto`; whether the model offers it is the model's `sizes` list's call (applyLimits). */
const SIZE = /^(\d{1,5}x\d{1,5}|auto)$/;

/** Fields shared by generations and edits (OpenAI's, plus steps, guidance, negative_prompt, seed). */
const common = {
  model: Joi.string().min(1).max(200).required(),
  prompt: Joi.string().min(1).required(),
  size: Joi.string().pattern(SIZE).messages({ 'string.pattern.base': "'size' must look like '1024x1024' (width x height), or be 'auto'." }),
  steps: Joi.number().integer(),
  guidance: Joi.number(),
  negative_prompt: Joi.string().allow(''),
  seed: Joi.number().integer().min(0).max(4_294_967_295),
  output_format: Joi.string(),
  n: Joi.number().integer(),
  response_format: Joi.string().valid('url', 'b64_json'),
  // OpenAI's enums (the vendored openapi.json, CreateImageRequest / CreateImageEditRequest): a value
  // outside them is refused here, naming the field, not sent upstream on a lane lease
  quality: Joi.string().valid('standard', 'hd', 'low', 'medium', 'high', 'auto'),
  style: Joi.string().valid('vivid', 'natural'),
  background: Joi.string().valid('transparent', 'opaque', 'auto'),
  moderation: Joi.string().valid('low', 'auto'),
  output_compression: Joi.number().integer().min(0).max(100),
  user: Joi.string().max(256),
};

export const generationSchema = Joi.object(common);

/**
 * CreateImageEditRequest (the vendored openapi.json, openai-node's ImageEditParams) has neither
 * `moderation` nor `style`, and no `hd` quality: on an edit they are refused here (an OpenAI upstream
 * refuses them as unknown parameters), as `input_fidelity` is on a generation.
 */
const editFields = Object.fromEntries(Object.entries(common).filter(([k]) => k !== 'moderation' && k !== 'style'));

/**
 * OpenAI's ImageRefParam (the vendored openapi.json, EditImageBodyJsonParam's `images` items and
 * `mask`): exactly one of `image_url` (an https URL or a base64 `data:` URL) or `file_id`, nothing else.
 */
const imageRef = Joi.object({
  image_url: Joi.string().min(1).max(20_971_520),
  file_id: Joi.string().min(1).max(64),
}).xor('image_url', 'file_id');

/** How to name the images of an edit, in every refusal that says none or several were named. */
export const NOTHING_TO_EDIT = "Name the image(s) to edit with 'images' (OpenAI's [{file_id} or {image_url}]) or 'image_ids' (or 'image_id'), or send 'image' files.";

/** JSON edits name stored images; multipart edits may also carry files (handled before this). */
export const editSchema = Joi.object({
  ...editFields,
  quality: Joi.string().valid('standard', 'low', 'medium', 'high', 'auto'),
  image_ids: Joi.array().items(Joi.string().max(64)).min(1),
  image_id: Joi.string().max(64),
  // OpenAI's JSON form (EditImageBodyJsonParam): up to 16 references, in order (the mask applies to the first)
  images: Joi.array().items(imageRef).min(1).max(16),
  // OpenAI's JSON form's mask, an ImageRefParam (a multipart mask is a file part, taken before this)
  mask: imageRef,
  // a stored image (an upload) as the mask of the first image, as `image_id` names an input
  mask_id: Joi.string().max(64),
  // CreateImageEditRequest: how closely the output follows the input images' features (GPT image models)
  input_fidelity: Joi.string().valid('high', 'low'),
})
  .xor('image_ids', 'image_id', 'images')
  .messages({ 'object.missing': NOTHING_TO_EDIT });

/** Multipart edits that carry files: `image_ids` may then be empty (the files are the sources). */
export const editWithFilesSchema = editSchema.fork(['image_ids'], (s) => (s as Joi.ArraySchema).min(0));

export const uploadSchema = Joi.object({
  url: Joi.string().max(4096),
  b64_json: Joi.string(),
}).xor('url', 'b64_json').messages({ 'object.missing': "Send 'url' or 'b64_json' (or a multipart 'file')." });

/** Streaming and partial images are not offered; a clear refusal beats a silent non-stream. */
const UNSUPPORTED = ['stream', 'partial_images'];

/**
 * Values of those fields that ask for what is served anyway (openai-node's non-streaming params:
 * `stream?: false | null`; no partial images): taken as not given. Multipart fields are strings.
 */
// a Map: a body's own keys such as `constructor` or `__proto__` must not find Object's members
const SERVED = new Map<string, unknown[]>([
  ['stream', [false, 'false']],
  ['partial_images', [0, '0']],
]);

/**
 * The body without the fields that say nothing: `null` (every optional field of OpenAI's image
 * requests is nullable, and the SDKs type them `| null`: null is the field not given) and the
 * SERVED values. Own `__proto__` keys are copied as own keys, for validate() to refuse.
 */
function givenFields(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(body)) {
    const v = body[k];
    if (v === null || SERVED.get(k)?.includes(v)) continue;
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** Each schema's field names, read once (describe() walks the whole schema). */
const knownFields = new WeakMap<Joi.ObjectSchema, Set<string>>();

/**
 * Null fields and `stream: false` are dropped (givenFields); then unknown fields are refused (400
 * `unknown_field`), known-but-unsupported ones too (400 `unsupported_parameter`), then the schema is
 * applied (400 `invalid_request`), each naming the field in `param`. Multipart text fields arrive as
 * strings, so they are converted; JSON is taken as typed.
 */

export function validateImageBody<T>(schema: Joi.ObjectSchema, raw: Record<string, unknown>, multipart = false): T {
  let known = knownFields.get(schema);
  if (!known) knownFields.set(schema, (known = new Set(Object.keys(schema.describe().keys ?? {}))));
  const body = givenFields(raw);
  for (const k of Object.keys(body)) {
    if (UNSUPPORTED.includes(k)) throw imageErrors.unsupportedParameter(`'${k}' is not supported on this endpoint.`, k);
    if (!known.has(k)) throw imageErrors.unknownField(k);
  }
  return validate<T>(schema, body, 'invalid_request', multipart);
}
