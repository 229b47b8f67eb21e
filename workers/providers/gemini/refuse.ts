import { ApiError } from '../../../shared/errors/ApiError';
import { refuseNonFunctionTools } from '../tool-choice';
import { emptyStop, refuseStops, refuseUnexpressible, unsupported } from '../unsupported';
import { eachPart, imageUrlOf, type ContentPart } from '../parts';


const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

/** A data URL's media type and base64 data; the Gemini API fetches no URL of ours, so anything else is refused. */
export function dataUrl(url: string, field: string): { mimeType: string; data: string } {
  const m = DATA_URL.exec(url);
  if (!m) throw unsupported(field, 'must be a base64 data URL on this model (the Gemini API does not fetch URLs).');
  return { mimeType: m[1], data: m[2] };
}

/**
 * A user or assistant content part as the Gemini API takes it: text, or inlineData from a data URL
 * (`image_url`, `file` with `file_data`); any other part is refused (400). The one reading of parts:
 * the translation (to-gemini.ts) and the refusal checked before it and by routing (refuseParts) alike.
 */
export function partOf(p: ContentPart, field: string): Record<string, unknown> {
  switch (p.type) {
    case 'text':
      return { text: String(p.text ?? '') };
    case 'image_url':
      return { inlineData: dataUrl(imageUrlOf(p), `${field}.image_url`) };
    case 'file': {
      const f = p.file as { file_data?: unknown } | undefined;
      if (!f?.file_data) throw unsupported(`${field}.file`, 'needs file_data on this model.');
      return { inlineData: dataUrl(String(f.file_data), `${field}.file`) };
    }
    default:
      throw new ApiError(400, 'invalid_request', `Content part type '${String(p.type)}' is not supported on this model.`);
  }
}

/** Every content part of the request that partOf refuses (an `input_audio` part, an image by URL, a file without data). */
const refuseParts = (messages: unknown) => eachPart(messages, (p, field) => void partOf(p, field));

/**
 * OpenAI-style reasoning effort → thinkingConfig, with the budgets Google's own OpenAI
 * compatibility layer uses (ai.google.dev/gemini-api/docs/openai#thinking); thoughts are asked for
 * so that they come back as reasoning content. `xhigh` (OpenAI) and `max` (Anthropic's effort) take
 * the highest of those budgets (the largest every 2.5 model accepts).
 */
export const THINKING_BUDGET: Record<string, number> = { none: 0, minimal: 1024, low: 1024, medium: 8192, high: 24576, xhigh: 24576, max: 24576 };

/** Gemini's own bound on the top tokens a step reports (`generationConfig.logprobs`), OpenAI's for `top_logprobs` too. */
export const TOP_LOGPROBS_MAX = 20;

/**
 * `top_logprobs` as Gemini takes it: an integer from 0 to 20, and only with `logprobs: true` (Gemini's
 * `logprobs` is valid only with `responseLogprobs`, as OpenAI's `top_logprobs` needs `logprobs`).
 */
function refuseTopLogprobs(body: Record<string, unknown>): void {
  const top = body.top_logprobs;
  if (top === undefined || top === null) return;
  if (typeof top !== 'number' || !Number.isInteger(top) || top < 0 || top > TOP_LOGPROBS_MAX) {
    throw new ApiError(400, 'invalid_request', `\`top_logprobs\` must be an integer from 0 to ${TOP_LOGPROBS_MAX}.`, { param: 'top_logprobs' });
  }
  if (top > 0 && body.logprobs !== true) throw new ApiError(400, 'invalid_request', '`top_logprobs` needs `logprobs: true`.', { param: 'top_logprobs' });
}

/**
 * Canonical fields that would change the answer and that the Gemini API has no counterpart for (or
 * that the adapter does not translate): those no translated upstream can express
 * (refuseUnexpressible; `n` and log probabilities are Gemini's candidateCount and responseLogprobs,
 * to-gemini.ts, and only a `top_logprobs` outside 0..20 or without `logprobs` is refused), `parallel_tool_calls: false`, a `reasoning_effort` without a thinking
 * budget, an empty `stop` entry, tools other than functions, content parts partOf refuses: refused,
 * never dropped. The routing of mixed pools asks the
 * same question (api/dispatch/route.ts), so every refusal that depends on the request alone is here. Hints that only tune an upstream
 * (`user`, `store`, `metadata`, `service_tier`, `prompt_cache_key`, `safety_identifier`) have no
 * effect here (docs/providers/gemini.md).
 */
export function refuseUntranslatable(body: Record<string, unknown>): void {
  refuseUnexpressible(body);
  refuseTopLogprobs(body);
  if (body.parallel_tool_calls === false) throw unsupported('parallel_tool_calls', 'cannot be switched off on this model.');
  const effort = body.reasoning_effort;
  if (typeof effort === 'string' && !Object.hasOwn(THINKING_BUDGET, effort)) throw unsupported('reasoning_effort', `'${effort}' is not supported on this model.`);
  // "\n" and other whitespace stop Gemini as asked; an empty sequence cannot
  refuseStops(body, emptyStop, 'sequences must not be empty on this model.');
  refuseNonFunctionTools(body); // only function tools have a Gemini form (functionDeclarations)
  refuseParts(body.messages);
}
