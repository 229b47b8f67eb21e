import type { Request, Response } from 'express';
import type { ResourceLink, Tool } from '@modelcontextprotocol/sdk/types.js';
import { modelAllowed } from '../../../shared/limits/controls';
import type { AppContext } from '../../context';
import { generationSchema, validateImageBody } from '../images/schema';
import { applyLimits, limitsOf, type ImageParams } from '../images/limits';
import { imagesResponse } from '../images/present';
import { imageGenerationOffBy } from '../images/gate';
import { dispatchImages, resolveImageModel } from '../../dispatch/images';
import { imageErrors } from '../../../shared/images/errors';
import { errors } from '../../../shared/errors/codes';
import { CONTENT_TYPES } from '../../../shared/images/inspect';

export const IMAGE_TOOL_NAME = 'generate_image';

export const IMAGE_TOOL: Tool = {
  name: IMAGE_TOOL_NAME,
  title: 'Generate an image',
  description: "Generates images from a prompt on the gateway's images pool and returns each stored image's id and URL (valid for 7 days).",
  inputSchema: {
    type: 'object',
    properties: {
      prompt: { type: 'string', minLength: 1, description: 'What to draw.' },
      model: { type: 'string', description: 'An image model id from GET /v1/models. Omitted: the first image model of the catalog.' },
      size: { type: 'string', description: "Width x height, e.g. '1024x1024'." },
      n: { type: 'integer', description: 'Number of images.' },
      background: { type: 'boolean', description: 'Run on the background lane (entitled organizations only; otherwise interactive).' },
    },
    required: ['prompt'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: {
      model: { type: 'string' },
      images: {
        type: 'array',
        items: { type: 'object', properties: { id: { type: 'string' }, url: { type: 'string' }, expires_at: { type: 'number' } }, required: ['id', 'url'] },
      },
    },
    required: ['model', 'images'],
  },
  // not read-only (it stores images), but additive: destructiveHint defaults to true in the MCP schema,
  // which tells a client to ask before every call; not idempotent (each call draws new images)
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
};

/** The first image model of the catalog (by id) that the caller's key may call (docs/keys.md). */
async function defaultImageModel(ctx: AppContext, req: Request): Promise<string> {
  const m = (await ctx.catalog.list())
    .filter((x) => x.capabilities.image_generation && modelAllowed(req.auth?.controls, x.publicId))
    .sort((a, b) => a.publicId.localeCompare(b.publicId))[0];
  if (!m) throw errors.modelNotFound('(default image model)');
  return m.publicId;
}

/** The protocol version from which a tool result may hold `resource_link` content blocks (added by 2025-06-18). */
export const RESOURCE_LINKS_SINCE = '2025-06-18';

/** A tool call's answer: the structured result, and the content blocks that follow its JSON text. */
export interface ImageToolAnswer {
  value: Record<string, unknown>;
  links: ResourceLink[];
}

/**
 * One `resource_link` per stored image (MCP 2025-06-18, tools, *Resource Links*: "A tool MAY return
 * links to Resources ... a URI that can be subscribed to or fetched by the client"): its signed URL,
 * which opens without a key for an hour (docs/images.md), its file name, MIME type and expiry. The
 * gateway lists no resources (`resources/list`), as the spec allows for links a tool returns.
 */
function imageLinks(images: Array<Record<string, unknown>>, format: string): ResourceLink[] {
  const mimeType = (CONTENT_TYPES as Record<string, string | undefined>)[format];
  return images.map((img, i) => {
    const link: ResourceLink = {
      type: 'resource_link',
      uri: String(img.url),
      name: `${String(img.id)}.${format}`,
      title: images.length > 1 ? `Generated image ${i + 1} of ${images.length}` : 'Generated image',
      description: `The stored image; this URL opens without an API key for an hour, GET /v1/images/${String(img.id)}/content with one until the image expires.`,
    };
    if (mimeType) link.mimeType = mimeType;
    return link;
  });
}

/**
 * `generate_image`: the same path as `POST /v1/images/generations` (kill switch and org policy,
 * validation, model limits, the images pool, the stored images), answered with ids and URLs, and
 * under protocol 2025-06-18 or later (`links`) with a `resource_link` block per image besides.
 * `background: true` asks for the model's `-background` variant.
 */
export async function callGenerateImage(ctx: AppContext, req: Request, res: Response, args: Record<string, unknown>, jobId: string, signal: AbortSignal | undefined, links: boolean): Promise<ImageToolAnswer> {
  const off = imageGenerationOffBy(ctx, req.auth!.org);
  if (off) throw imageErrors.disabled(off);
  // the declared inputSchema has additionalProperties: false; an argument outside it was taken by the
  // REST schema (quality, seed, response_format, ...) and sent upstream or silently ignored
  const unknown = Object.keys(args).find((k) => !Object.prototype.hasOwnProperty.call(IMAGE_TOOL.inputSchema.properties, k));
  if (unknown) throw errors.invalidRequest(`Unknown argument '${unknown}'.`);
  const { background, ...rest } = args;
  if (background !== undefined && typeof background !== 'boolean') throw errors.invalidRequest("'background' must be a boolean.");
  const model = rest.model === undefined ? await defaultImageModel(ctx, req) : rest.model;
  const body = validateImageBody<ImageParams & { model: string }>(generationSchema, { ...rest, model });
  const requested = background === true && !body.model.endsWith('-background') ? `${body.model}-background` : body.model;
  const resolved = await resolveImageModel(ctx, req, requested);
  const { upstream, size } = applyLimits(body, limitsOf(resolved.model));
  const result = await dispatchImages(ctx, req, res, { resolved, operation: 'generate', params: upstream, sources: [], size, jobId, signal });
  const format = String(upstream.output_format);
  const out = await imagesResponse(req, result, { model: body.model, size, format, b64: false });
  return { value: { model: body.model, images: out.data }, links: links ? imageLinks(out.data, format) : [] };
}
