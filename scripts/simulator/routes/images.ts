import { Router, type Request, type Response } from 'express';
import multer from 'multer';
import sharp from 'sharp';
import type { KnobStore, TakenKnobs } from '../knobs';
import type { RequestLog } from '../request-log';
import { applyFaults } from '../faults';
import { drawImage, editImage, type OutputFormat } from '../draw';

const FORMATS = ['png', 'jpeg', 'webp'];

/** OpenAI's GPT image models (gpt-image-1, -1-mini, -1.5, -2, chatgpt-image-latest), by the upstream model name. */
const GPT_IMAGE = /^(gpt-image|chatgpt-image)/i;

function invalid(res: Response, param: string, message: string): void {
  res.status(400).json({ error: { message, type: 'invalid_request_error', param, code: null } });
}

type Params = { prompt: string; n: number; width: number; height: number; format: OutputFormat; key: string; model: string; quality?: unknown; background?: unknown };

/** Reads OpenAI's image parameters (JSON numbers or multipart strings); answers 400 as OpenAI does. */
function params(body: Record<string, unknown>, res: Response): Params | undefined {
  const prompt = typeof body.prompt === 'string' ? body.prompt : '';
  if (!prompt) return void invalid(res, 'prompt', 'prompt is required.');
  const n = body.n === undefined ? 1 : Number(body.n);
  if (!Number.isInteger(n) || n < 1 || n > 10) return void invalid(res, 'n', 'n must be between 1 and 10.');
  // `auto` (GPT image models' default) is drawn square, as OpenAI mostly answers it.
  const m = /^(\d{2,4})x(\d{2,4})$/.exec(body.size === 'auto' ? '1024x1024' : String(body.size ?? '1024x1024'));
  const width = m ? Number(m[1]) : 0;
  const height = m ? Number(m[2]) : 0;
  if (!m || width < 16 || height < 16 || width > 4096 || height > 4096) return void invalid(res, 'size', `Invalid size '${body.size}'.`);
  const format = String(body.output_format ?? 'png') as OutputFormat;
  if (!FORMATS.includes(format)) return void invalid(res, 'output_format', `Invalid output_format '${format}'.`);
  // OpenAI's GPT image models take no response_format at all (they always answer base64): 400
  // unknown_parameter, as OpenAI answers it (vercel/ai#6102, lofcz/LLMTornado#155 quote the body)
  if (body.response_format != null && GPT_IMAGE.test(String(body.model ?? ''))) {
    return void res.status(400).json({ error: { message: "Unknown parameter: 'response_format'.", type: 'invalid_request_error', param: 'response_format', code: 'unknown_parameter' } });
  }
  if (body.response_format !== undefined && body.response_format !== 'b64_json') {
    return void invalid(res, 'response_format', 'This model only returns b64_json.');
  }
  const key = [prompt, body.negative_prompt ?? '', body.seed ?? '', body.steps ?? '', body.guidance ?? ''].join('\u0000');
  return { prompt, n, width, height, format, key, model: String(body.model ?? ''), quality: body.quality, background: body.background };
}

/**
 * OpenAI's checks of an edit's `mask` (CreateImageEditRequest: a PNG with the first image's size; its
 * transparent areas mark the edit, so it needs alpha), answered in its words; undefined when it passes.
 */
async function maskProblem(mask: Buffer, first: Buffer): Promise<string | undefined> {
  const [m, f] = await Promise.all([sharp(mask).metadata(), sharp(first).metadata()]).catch(() => [undefined, undefined]);
  if (!m || !f || m.format !== 'png') return 'Invalid mask image format - mask must be a PNG file';
  if (!m.hasAlpha) return 'Invalid mask image format - mask image missing alpha channel';
  if (m.width !== f.width || m.height !== f.height) return 'Invalid mask image format - mask size does not match image size';
  return undefined;
}

const NOT_AN_IMAGE = Buffer.from('these bytes are not an image, only text');

const pick = (v: unknown, allowed: string[], otherwise: string) => (typeof v === 'string' && allowed.includes(v) ? v : otherwise);

/**
 * The answer OpenAI gives for the upstream model's kind (the vendored openapi.json): dall-e models
 * answer `created` and `data` only, dall-e-3 with a `revised_prompt` per image; the rest (GPT image
 * kind, the simulator's own models) add `output_format`, `size`, `quality`, `background` (what was
 * used: `auto` or an unknown value becomes `medium` / `opaque`) and the token `usage`.
 */
/** Images answered as links to the simulator itself (`imageUrl: 'self'`), served by GET /_sim/linked/:id. */
const linked = new Map<string, Buffer>();
let linkedSeq = 0;

function answer(res: Response, p: Params, drawn: Buffer[], k: TakenKnobs): void {
  const from = k.nonImageFrom;
  const images = from === undefined ? drawn : drawn.map((b, i) => (i >= from ? NOT_AN_IMAGE : b));
  const created = Math.floor(Date.now() / 1000);
  if (k.imageUrl === 'self') {
    const host = res.req.headers.host;
    const urls = images.map((b) => {
      const id = `img-${++linkedSeq}`;
      linked.set(id, b);
      return `http://${host}/_sim/linked/${id}`;
    });
    return void res.json({ created, data: urls.map((url) => ({ url })) });
  }
  if (k.imageUrl !== undefined) return void res.json({ created, data: images.map(() => ({ url: k.imageUrl })) });
  if (/dall-e/.test(p.model)) {
    const revised = /dall-e-3/.test(p.model);
    return void res.json({ created, data: images.map((b, i) => ({ b64_json: b.toString('base64'), ...(revised ? { revised_prompt: `A detailed picture (${i + 1} of ${images.length}) of ${p.prompt}` } : {}) })) });
  }
  const input = Math.ceil(p.prompt.length / 4);
  const output = images.length * 256;
  res.json({
    created,
    data: images.map((b) => ({ b64_json: b.toString('base64') })),
    output_format: p.format,
    size: `${p.width}x${p.height}`,
    quality: pick(p.quality, ['low', 'medium', 'high'], 'medium'),
    background: pick(p.background, ['transparent', 'opaque'], 'opaque'),
    usage: { input_tokens: input, output_tokens: output, total_tokens: input + output, input_tokens_details: { text_tokens: input, image_tokens: 0 } },
  });
}

/**
 * OpenAI's images API: generations (JSON) and edits (multipart with `image` or `image[]`). Images
 * are real PNG/JPEG/WebP of the requested size, drawn deterministically from the parameters.
 */
export function imagesRoutes(knobs: KnobStore, log: RequestLog): Router {
  const r = Router();
  r.get('/_sim/linked/:id', (req: Request, res: Response) => {
    const bytes = linked.get(String(req.params.id));
    if (!bytes) return void res.status(404).end();
    res.type('image/png').send(bytes);
  });
  const upload = multer({ storage: multer.memoryStorage(), limits: { fileSize: 50 * 1024 * 1024, files: 17 } });

  r.post('/v1/images/generations', async (req: Request, res: Response) => {
    log.record(req, res);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const k = knobs.take(String(body.model ?? ''));
    if (await applyFaults(k, res)) return;
    const p = params(body, res);
    if (!p) return;
    const images = await Promise.all(Array.from({ length: p.n }, (_, i) => drawImage(`${p.key}\u0000${i}`, p.width, p.height, p.format)));
    answer(res, p, images, k);
  });

  r.post('/v1/images/edits', upload.any(), async (req: Request, res: Response) => {
    log.record(req, res);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const k = knobs.take(String(body.model ?? ''));
    if (await applyFaults(k, res)) return;
    const files = ((req.files as Express.Multer.File[]) ?? []).filter((f) => f.fieldname === 'image' || f.fieldname === 'image[]');
    if (files.length === 0) return invalid(res, 'image', 'image is required.');
    const p = params(body, res);
    if (!p) return;
    const mask = ((req.files as Express.Multer.File[]) ?? []).find((f) => f.fieldname === 'mask');
    const wrong = mask ? await maskProblem(mask.buffer, files[0].buffer) : undefined;
    if (wrong) return void res.status(400).json({ error: { message: wrong, type: 'invalid_request_error', param: 'mask', code: 'invalid_mask_image_format' } });
    try {
      const images = await Promise.all(Array.from({ length: p.n }, (_, i) => editImage(files[i % files.length].buffer, `${p.key}\u0000${i}`, p.width, p.height, p.format)));
      answer(res, p, images, k);
    } catch {
      invalid(res, 'image', 'The image could not be read.');
    }
  });
  return r;
}
