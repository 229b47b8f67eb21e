import { invalid, kindOf, rejectUnknownFields, requireModel } from './errors';
import type { EmbeddingLimits } from '../../../shared/catalog/task-limits';
import { countEach, TokenCountTimeout } from '../../../shared/tokenizer/pool';

export const EMBEDDINGS_FIELDS = ['model', 'input', 'encoding_format', 'dimensions', 'user'] as const;

export interface EmbeddingsRequest {
  model: string;
  input: string | string[];
  encodingFormat: 'float' | 'base64';
  dimensions?: number;
}

/**
 * The checks that need no model: unknown fields, `input` a non-empty string or a non-empty array of
 * non-empty strings (token-id arrays, nested arrays, null and other types refused), the format, the
 * type of `dimensions` and `user`. `null` on an optional field means "not given".
 */
export function parseEmbeddings(body: Record<string, unknown>): EmbeddingsRequest {
  rejectUnknownFields(body, EMBEDDINGS_FIELDS);
  const model = requireModel(body);
  const input = body.input;
  if (input === undefined) throw invalid('invalid_input', "'input' is required: a string or an array of strings.");
  if (typeof input === 'string') {
    if (input.length === 0) throw invalid('invalid_input', "'input' must not be an empty string.");
  } else if (Array.isArray(input)) {
    if (input.length === 0) throw invalid('invalid_input', "'input' must not be an empty array.");
    for (let i = 0; i < input.length; i++) {
      const v = input[i];
      if (typeof v === 'number') throw invalid('invalid_input', `'input[${i}]' is a number: token-id arrays are not accepted; send text.`);
      if (typeof v !== 'string') throw invalid('invalid_input', `'input[${i}]' must be a string, not ${kindOf(v)}.`);
      if (v.length === 0) throw invalid('invalid_input', `'input[${i}]' must not be an empty string.`);
    }
  } else {
    throw invalid('invalid_input', `'input' must be a string or an array of strings, not ${kindOf(input)}.`);
  }
  const fmt = body.encoding_format ?? 'float';
  if (fmt !== 'float' && fmt !== 'base64') throw invalid('invalid_input', "'encoding_format' must be 'float' or 'base64'.");
  const dims = body.dimensions ?? undefined;
  if (dims !== undefined && (typeof dims !== 'number' || !Number.isInteger(dims) || dims < 1)) {
    throw invalid('invalid_input', "'dimensions' must be a positive integer.");
  }
  if (body.user !== undefined && body.user !== null && typeof body.user !== 'string') throw invalid('invalid_input', "'user' must be a string.");
  return { model, input: input as string | string[], encodingFormat: fmt, dimensions: dims as number | undefined };
}

/**
 * The model's limits: batch size, `dimensions` support and range, each input's tokens under the
 * model's tokenizer profile (never truncated) and their sum per request, counted off the event loop when large and within the
 * token-count time budget (shared/tokenizer/pool.ts). Returns the total input tokens.
 */
export async function checkEmbeddingLimits(
  req: EmbeddingsRequest,
  model: string,
  tokenizer: string,
  limits: EmbeddingLimits,
  /** The request's own names for the inputs and the dimensions (Cohere's `texts`, `output_dimension`). */
  names: { input: string; dimensions: string } = { input: 'input', dimensions: 'dimensions' },
  /** A per-input cap the caller set below the model's (Cohere's `max_tokens`): an input past it is refused as one past the model's limit. */
  callerCap?: { field: string; tokens: number },
): Promise<number> {
  const inputs = typeof req.input === 'string' ? [req.input] : req.input;
  const cap = callerCap && callerCap.tokens < limits.max_input_tokens ? callerCap : undefined;
  const perInput = cap ? cap.tokens : limits.max_input_tokens;
  if (inputs.length > limits.max_batch_size) {
    throw invalid('batch_too_large', `'${names.input}' has ${inputs.length} items; the model '${model}' takes at most ${limits.max_batch_size} per request.`);
  }
  if (req.dimensions !== undefined) {
    if (!limits.supports_dimensions) throw invalid('invalid_input', `The model '${model}' does not support '${names.dimensions}'.`);
    if (limits.dimensions !== null && req.dimensions > limits.dimensions) {
      throw invalid('invalid_input', `'${names.dimensions}' must be between 1 and ${limits.dimensions} for the model '${model}'.`);
    }
  }
  const counts = await countEach(tokenizer, inputs, perInput).catch((err: unknown) => {
    if (err instanceof TokenCountTimeout) throw invalid('input_too_long', `'${names.input}' is too large to count its tokens in time; send fewer or shorter inputs.`);
    throw err;
  });
  let total = 0;
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i];
    if (n === false) {
      const where = typeof req.input === 'string' ? `'${names.input}'` : `'${names.input}[${i}]'`;
      const limit = cap ? `'${cap.field}' (${cap.tokens} tokens)` : `the model's limit of ${limits.max_input_tokens} tokens`;
      throw invalid('input_too_long', `${where} is longer than ${limit}; inputs are never truncated.`);
    }
    total += n;
  }
  // OpenAI refuses a request whose inputs add up to more (300,000 tokens): refused here, before a lane or the upstream
  if (limits.max_tokens_per_request !== null && total > limits.max_tokens_per_request) {
    throw invalid('batch_too_large', `'${names.input}' has ${total} tokens in all; the model '${model}' takes at most ${limits.max_tokens_per_request} tokens per request (send fewer inputs; nothing is truncated).`);
  }
  return total;
}
