import { Router, type Request, type Response } from 'express';
import type { KnobStore } from '../knobs';
import type { RequestLog } from '../request-log';
import { applyFaults } from '../faults';
import { embedText, simTokens } from '../vectors';

/** The simulated models' native vector length. */
export const SIM_EMBED_DIMENSIONS = 256;

function bad(res: Response, message: string, param: string): void {
  res.status(400).json({ error: { message, type: 'invalid_request_error', param, code: null } });
}

const COHERE_TYPES = ['float', 'int8', 'uint8', 'binary', 'ubinary', 'base64'];

/**
 * One of Cohere's embedding types of a float vector, as this simulator computes it: base64 and the
 * binary types by Cohere's definitions (float32 bytes; one bit a dimension, set above 0, highest bit
 * first), int8 and uint8 by a fixed scale of its own (Cohere's are calibrated per model).
 */
function simTyped(t: string, v: number[]): unknown {
  if (t === 'float') return v;
  if (t === 'base64') return Buffer.from(new Float32Array(v).buffer).toString('base64');
  if (t === 'int8' || t === 'uint8') return v.map((x) => Math.max(-128, Math.min(127, Math.round(x * 512))) + (t === 'uint8' ? 128 : 0));
  const bytes: number[] = [];
  for (let i = 0; i < v.length; i += 8) {
    let byte = 0;
    for (let k = 0; k < 8 && i + k < v.length; k++) byte = byte | ((v[i + k] > 0 ? 1 : 0) << (7 - k));
    bytes.push(t === 'binary' ? byte - 128 : byte);
  }
  return bytes;
}

/** OpenAI embeddings (`POST /v1/embeddings`): deterministic vectors, float or base64, `dimensions` honoured; and Cohere's `POST /v2/embed`. */
export function embeddingsRoutes(knobs: KnobStore, log: RequestLog): Router {
  const r = Router();
  r.post('/v1/embeddings', async (req: Request, res: Response) => {
    log.record(req, res);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const model = String(body.model ?? '');
    if (await applyFaults(knobs.take(model), res)) return;
    const input = body.input;
    const texts = typeof input === 'string' ? [input] : input;
    if (!Array.isArray(texts) || texts.length === 0 || !texts.every((t) => typeof t === 'string' && t.length > 0)) {
      return bad(res, "'input' must be a non-empty string or array of non-empty strings.", 'input');
    }
    const dims = body.dimensions === undefined ? SIM_EMBED_DIMENSIONS : body.dimensions;
    if (typeof dims !== 'number' || !Number.isInteger(dims) || dims < 1 || dims > SIM_EMBED_DIMENSIONS) {
      return bad(res, `'dimensions' must be an integer between 1 and ${SIM_EMBED_DIMENSIONS}.`, 'dimensions');
    }
    const fmt = body.encoding_format ?? 'float';
    if (fmt !== 'float' && fmt !== 'base64') return bad(res, "'encoding_format' must be 'float' or 'base64'.", 'encoding_format');
    const data = (texts as string[]).map((t, index) => {
      const vec = embedText(t, SIM_EMBED_DIMENSIONS, dims);
      let embedding: number[] | string = vec;
      if (fmt === 'base64') {
        const buf = Buffer.alloc(vec.length * 4);
        vec.forEach((x, i) => buf.writeFloatLE(x, i * 4));
        embedding = buf.toString('base64');
      }
      return { object: 'embedding', index, embedding };
    });
    const tokens = (texts as string[]).reduce((s, t) => s + simTokens(t), 0);
    res.json({ object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
  });
  // Cohere v2 embed (`POST /v2/embed`, Cohere's document): texts, input_type required, the
  // embedding_types asked for (float by default), output_dimension honoured, billed input tokens in meta.
  r.post('/v2/embed', async (req: Request, res: Response) => {
    log.record(req, res);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const model = String(body.model ?? '');
    if (await applyFaults(knobs.take(model), res)) return;
    const cohereBad = (message: string) => res.status(400).json({ message });
    const texts = body.texts;
    if (!Array.isArray(texts) || texts.length === 0 || texts.length > 96 || !texts.every((t) => typeof t === 'string')) return cohereBad('invalid request: texts must be an array of 1 to 96 strings');
    if (!['search_document', 'search_query', 'classification', 'clustering'].includes(String(body.input_type))) return cohereBad('invalid request: valid input_type must be provided');
    const types = (body.embedding_types as unknown[] | undefined) ?? ['float'];
    if (!Array.isArray(types) || types.length === 0 || !types.every((t) => COHERE_TYPES.includes(String(t)))) return cohereBad('invalid request: embedding_types must be some of ' + COHERE_TYPES.join(', '));
    const dims = body.output_dimension ?? SIM_EMBED_DIMENSIONS;
    if (typeof dims !== 'number' || !Number.isInteger(dims) || dims < 1 || dims > SIM_EMBED_DIMENSIONS) return cohereBad('invalid request: output_dimension out of range');
    const float = (texts as string[]).map((t) => embedText(t, SIM_EMBED_DIMENSIONS, dims));
    const tokens = (texts as string[]).reduce((s, t) => s + simTokens(t), 0);
    const embeddings: Record<string, unknown[]> = {};
    for (const t of types as string[]) embeddings[t] = float.map((v) => simTyped(t, v));
    res.json({ id: `sim-${Date.now()}`, embeddings, texts, meta: { api_version: { version: '2' }, billed_units: { input_tokens: tokens } }, response_type: 'embeddings_by_type' });
  });
  return r;
}
