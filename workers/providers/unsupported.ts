import { ApiError } from '../../shared/errors/ApiError';

/** 400 `unsupported_parameter` naming the field: a translated upstream (Gemini, Anthropic, Bedrock) cannot express it as asked. */
export function unsupported(param: string, why: string): ApiError {
  return new ApiError(400, 'unsupported_parameter', `\`${param}\` ${why}`, { param });
}

/** A request field that was given (not absent, not null). */
export const given = (v: unknown): boolean => v !== undefined && v !== null;

/** More than one choice (`n`) and token log probabilities: Anthropic's and Bedrock's APIs have neither (Gemini's has both). */
export function refuseChoicesAndLogprobs(body: Record<string, unknown>): void {
  if (typeof body.n === 'number' && body.n > 1) throw unsupported('n', 'above 1 is not supported on this model.');
  if (body.logprobs === true) throw unsupported('logprobs', 'is not supported on this model.');
  if (given(body.top_logprobs)) throw unsupported('top_logprobs', 'is not supported on this model.');
}

/**
 * The canonical fields none of the translated upstreams (Anthropic messages, Gemini, Bedrock
 * Converse) can express and that would change the answer: a non-empty `logit_bias`, audio output (`audio`, non-text `modalities`),
 * `web_search_options` (an upstream's own search would bypass the gateway's search rails and their
 * billing), the legacy `functions`/`function_call` (answered in their own legacy shape),
 * `moderation`, a `verbosity` other than OpenAI's default `medium`, a `response_format` type other
 * than text/JSON. Refused (400 naming the field), never dropped; each adapter adds its own.
 */
export function refuseUnexpressible(body: Record<string, unknown>): void {
  if (given(body.logit_bias) && Object.keys(body.logit_bias as object).length) throw unsupported('logit_bias', 'is not supported on this model.');
  if (given(body.audio)) throw unsupported('audio', 'output is not supported on this model (it answers text only).');
  if (Array.isArray(body.modalities) && body.modalities.some((m) => m !== 'text')) throw unsupported('modalities', 'other than text are not supported on this model.');
  if (given(body.web_search_options)) throw unsupported('web_search_options', 'is not supported on this model.');
  if (given(body.functions) || given(body.function_call)) throw unsupported(given(body.functions) ? 'functions' : 'function_call', 'is not supported on this model: use `tools`.');
  if (given(body.moderation)) throw unsupported('moderation', 'is not supported on this model.');
  if (given(body.verbosity) && body.verbosity !== 'medium') throw unsupported('verbosity', 'other than the default `medium` is not supported on this model.');
  const rf = body.response_format as { type?: unknown } | undefined | null;
  if (rf && rf.type !== 'text' && rf.type !== 'json_object' && rf.type !== 'json_schema') throw unsupported('response_format', `type '${String(rf.type)}' is not supported on this model.`);
}

/** An empty stop sequence: no upstream can stop on it (Bedrock's API takes one character at least). */
export const emptyStop = (s: unknown): boolean => typeof s !== 'string' || s === '';

/** A stop sequence without a non-whitespace character: Anthropic refuses it (400), on its API and on Bedrock alike. */
export const blankStop = (s: unknown): boolean => typeof s !== 'string' || s.trim() === '';

/** `stop` (a string or a list) holding an entry the upstream refuses (`bad`): 400 naming `stop`. */
export function refuseStops(body: Record<string, unknown>, bad: (s: unknown) => boolean, why: string): void {
  const stop = body.stop;
  if ((typeof stop === 'string' && bad(stop)) || (Array.isArray(stop) && stop.some(bad))) throw unsupported('stop', why);
}
