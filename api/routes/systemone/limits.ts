import type { CatalogModel } from '../../../shared/catalog/catalog';
import { systemoneErrors } from '../../../shared/systemone/errors';

/** A decision model's limits; every one must be set (a model missing one does not serve decisions). */
export interface DecisionLimits {
  maxStateBytes: number;
  maxRequestBytes: number;
  maxQuestions: number;
  maxInputTokens: number;
}

const FIELDS: Array<[keyof DecisionLimits, string]> = [
  ['maxStateBytes', 'max_state_bytes'],
  ['maxRequestBytes', 'max_request_bytes'],
  ['maxQuestions', 'max_questions'],
  ['maxInputTokens', 'max_input_tokens'],
];

/** Reads the limits fail-closed: a missing or non-positive value refuses the request. */
export function decisionLimits(m: CatalogModel): DecisionLimits {
  const out = {} as DecisionLimits;
  for (const [key, field] of FIELDS) {
    const v = m.limits?.[field];
    if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) {
      throw systemoneErrors.invalid(`The model '${m.publicId}' cannot serve decisions: its limit '${field}' is not configured.`);
    }
    out[key] = v;
  }
  return out;
}

export interface MeasuredRequest {
  questions: number;
  stateBytes: number;
  requestBytes: number;
}

/**
 * Refuses a request over any of the model's limits; nothing is ever truncated. The input tokens
 * are counted last, only once the cheap limits pass (tokenizing is the costly measure), and returned.
 */
export async function enforceLimits(limits: DecisionLimits, m: MeasuredRequest, countInputTokens: (limit: number) => Promise<number | false>): Promise<number> {
  const over = (what: string, got: number, max: number) =>
    systemoneErrors.invalid(`The request is over the model's ${what} limit (${got} > ${max}).`);
  if (m.questions > limits.maxQuestions) throw over('question count', m.questions, limits.maxQuestions);
  if (m.stateBytes > limits.maxStateBytes) throw over('state size (bytes)', m.stateBytes, limits.maxStateBytes);
  if (m.requestBytes > limits.maxRequestBytes) throw over('request size (bytes)', m.requestBytes, limits.maxRequestBytes);
  // Counting stops as soon as the limit is passed: the work is bounded by what the limit allows.
  const inputTokens = await countInputTokens(limits.maxInputTokens);
  if (inputTokens === false) throw systemoneErrors.invalid(`The request is over the model's input tokens limit (more than ${limits.maxInputTokens}).`);
  if (inputTokens > limits.maxInputTokens) throw over('input tokens', inputTokens, limits.maxInputTokens);
  return inputTokens;
}
