import { ApiError } from '../../../shared/errors/ApiError';

/** 400 `unsupported_parameter` naming the field: the Gemini API cannot express it as asked. */
export function unsupported(param: string, why: string): ApiError {
  return new ApiError(400, 'unsupported_parameter', `\`${param}\` ${why}`, { param });
}

const set = (v: unknown) => v !== undefined && v !== null;

/**
 * Canonical fields that would change the answer and that the Gemini API has no counterpart for (or
 * that the adapter does not translate): refused, never dropped. Hints that only tune an upstream
 * (`user`, `store`, `metadata`, `service_tier`, `prompt_cache_key`, `safety_identifier`) have no
 * effect here (docs/providers/gemini.md).
 */
export function refuseUntranslatable(body: Record<string, unknown>): void {
  if (typeof body.n === 'number' && body.n > 1) throw unsupported('n', 'above 1 is not supported on this model.');
  if (body.logprobs === true) throw unsupported('logprobs', 'is not supported on this model.');
  if (set(body.top_logprobs)) throw unsupported('top_logprobs', 'is not supported on this model.');
  if (set(body.logit_bias)) throw unsupported('logit_bias', 'is not supported on this model.');
  if (body.parallel_tool_calls === false) throw unsupported('parallel_tool_calls', 'cannot be switched off on this model.');
  if (set(body.audio)) throw unsupported('audio', 'output is not supported on this model.');
  if (Array.isArray(body.modalities) && body.modalities.some((m) => m !== 'text')) throw unsupported('modalities', 'other than text are not supported on this model.');
  if (set(body.web_search_options)) throw unsupported('web_search_options', 'is not supported on this model.');
  if (set(body.functions) || set(body.function_call)) throw unsupported(set(body.functions) ? 'functions' : 'function_call', 'is not supported on this model: use `tools`.');
  const rf = body.response_format as { type?: string } | undefined;
  if (rf && rf.type !== 'text' && rf.type !== 'json_object' && rf.type !== 'json_schema') throw unsupported('response_format', `type '${String(rf.type)}' is not supported on this model.`);
}
