import { isRecord } from '../is-record';
import type { ChoiceAnswer, DecisionAnswer, NoulAnswer, QuestionPlan, ScoreAnswer } from './types';

/** Raised for an upstream answer the gateway cannot use (the caller sees 502 systemone_backend_error). */
export class UnusableAnswer extends Error {}

/** Upstream content larger than this is refused as over cap, whatever the model's output limit. */
export const MAX_ANSWER_BYTES = 256 * 1024;

interface TopLogprob {
  token: string;
  logprob: number;
}
interface TokenLogprob extends TopLogprob {
  top_logprobs?: TopLogprob[];
}

const isProbability = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1;

/**
 * P(true) at the token that carries a noul question's boolean, from the upstream's top
 * log-probabilities: the mass on tokens spelling "true" against those spelling "false".
 * Undefined when the upstream gave no usable log-probabilities there.
 */
export function noulFromLogprobs(content: string, tokens: TokenLogprob[] | undefined, label: string): number | undefined {
  if (!tokens?.length) return undefined;
  const key = content.indexOf(`"${label}"`);
  if (key < 0) return undefined;
  const m = /"answer"\s*:\s*/.exec(content.slice(key));
  if (!m) return undefined;
  const at = key + m.index + m[0].length;
  let offset = 0;
  for (const t of tokens) {
    const end = offset + t.token.length;
    if (at >= offset && at < end) {
      const tops = t.top_logprobs?.length ? t.top_logprobs : [t];
      let pTrue = 0;
      let pFalse = 0;
      for (const c of tops) {
        const s = c.token.trim().toLowerCase();
        if (!s || !Number.isFinite(c.logprob)) continue;
        if ('true'.startsWith(s)) pTrue += Math.exp(c.logprob);
        else if ('false'.startsWith(s)) pFalse += Math.exp(c.logprob);
      }
      return pTrue + pFalse > 0 ? pTrue / (pTrue + pFalse) : undefined;
    }
    offset = end;
  }
  return undefined;
}

/** Normalises the model's probabilities over exactly `keys`; missing keys count 0, unknown keys are refused. */
function distribution(raw: unknown, keys: string[], what: string): Record<string, number> {
  if (!isRecord(raw)) throw new UnusableAnswer(`${what}: probabilities missing`);
  const known = new Set(keys);
  for (const k of Object.keys(raw)) if (!known.has(k)) throw new UnusableAnswer(`${what}: probability for unknown key`);
  const values = keys.map((k) => (raw[k] === undefined ? 0 : raw[k]));
  if (!values.every((v) => typeof v === 'number' && Number.isFinite(v) && v >= 0)) throw new UnusableAnswer(`${what}: bad probability`);
  const sum = (values as number[]).reduce((a, b) => a + b, 0);
  if (!(sum > 0)) throw new UnusableAnswer(`${what}: probabilities sum to zero`);
  return Object.fromEntries(keys.map((k, i) => [k, (values[i] as number) / sum]));
}

function noul(q: QuestionPlan, a: Record<string, unknown>, fromLogprobs: number | undefined): NoulAnswer {
  if (typeof a.answer !== 'boolean') throw new UnusableAnswer(`${q.label}: answer is not a boolean`);
  if (a.probability !== undefined && !isProbability(a.probability)) throw new UnusableAnswer(`${q.label}: bad probability`);
  let p = fromLogprobs ?? (a.probability as number | undefined);
  if (p === undefined) throw new UnusableAnswer(`${q.label}: no probability`);
  // The stated answer and the probability must agree on the side of 0.5.
  if (fromLogprobs === undefined && (a.answer ? p < 0.5 : p > 0.5)) p = 1 - p;
  return { type: 'noul', noul: Math.round(p * 1e6) / 1e6 };
}

function choice(q: QuestionPlan, a: Record<string, unknown>): ChoiceAnswer {
  const keys = q.options!;
  if (typeof a.choice !== 'string' || !keys.includes(a.choice)) throw new UnusableAnswer(`${q.label}: choice is not an option key`);
  const probabilities = distribution(a.probabilities, keys, q.label);
  return { type: 'choice', choice: a.choice, confidence: probabilities[a.choice], probabilities };
}

function score(q: QuestionPlan, a: Record<string, unknown>): ScoreAnswer {
  const levels = Object.keys(q.legend!);
  if (typeof a.level !== 'number' || !levels.includes(String(a.level))) throw new UnusableAnswer(`${q.label}: level out of range`);
  const probabilities = distribution(a.probabilities, levels, q.label);
  const expected = levels.reduce((s, l) => s + Number(l) * probabilities[l], 0);
  const confidence = Math.max(...Object.values(probabilities));
  return { type: 'score', score: Math.round(expected * 1e6) / 1e6, confidence, legend: q.legend!, probabilities };
}

/**
 * Turns the upstream chat completion into typed answers keyed by the caller's question ids, or
 * throws UnusableAnswer (malformed, truncated, over cap, or not matching the questions).
 */
export function parseDecisionAnswers(plan: QuestionPlan[], completion: Record<string, unknown>): Record<string, DecisionAnswer> {
  const c0 = (completion.choices as unknown[] | undefined)?.[0] as Record<string, unknown> | undefined;
  const message = c0?.message as Record<string, unknown> | undefined;
  if (!c0 || !message) throw new UnusableAnswer('no choice in the completion');
  if (c0.finish_reason === 'length') throw new UnusableAnswer('the answer hit the output cap');
  const content = message.content;
  if (typeof content !== 'string' || content.length === 0) throw new UnusableAnswer('no content');
  if (Buffer.byteLength(content) > MAX_ANSWER_BYTES) throw new UnusableAnswer('the answer is over the size cap');
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    throw new UnusableAnswer('the answer is not JSON');
  }
  if (!isRecord(parsed)) throw new UnusableAnswer('the answer is not an object');
  const tokens = ((c0.logprobs as Record<string, unknown> | null | undefined)?.content ?? undefined) as TokenLogprob[] | undefined;
  const entries = plan.map((q): [string, DecisionAnswer] => {
    const a = parsed[q.label];
    if (!isRecord(a)) throw new UnusableAnswer(`${q.label}: missing`);
    if (q.type === 'noul') return [q.id, noul(q, a, noulFromLogprobs(content, Array.isArray(tokens) ? tokens : undefined, q.label))];
    if (q.type === 'choice') return [q.id, choice(q, a)];
    return [q.id, score(q, a)];
  });
  return Object.fromEntries(entries);
}
