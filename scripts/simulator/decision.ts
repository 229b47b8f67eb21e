import { encode, decode } from 'gpt-tokenizer';
import type { Knobs } from './knobs';

/**
 * The simulator's decision model: answers structured decision prompts (the gateway's
 * `systemone_decision` json_schema) deterministically from their content. Each option, level or
 * true/false description is scored by how many of its words appear in the state; scores become
 * probabilities by a softmax. With `logprobs: true` the boolean of each noul answer is one token
 * whose top log-probabilities carry P(true) and P(false); the probability stated in the JSON is
 * rounded to one decimal, as a model's verbalised probability tends to be.
 */

type Json = Record<string, unknown>;
type Part = { type: string; text?: string; image_url?: unknown };

const IMAGE_TOKENS = 765;
const STOP = new Set(['the', 'and', 'for', 'are', 'this', 'that', 'with', 'was', 'has', 'have', 'not', 'but', 'its', 'any', 'one']);

export function isDecisionRequest(body: Json): boolean {
  const rf = body.response_format as { type?: string; json_schema?: { name?: string } } | undefined;
  return rf?.type === 'json_schema' && rf.json_schema?.name === 'systemone_decision';
}

function words(text: string): Set<string> {
  return new Set(text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length >= 3 && !STOP.has(w)));
}

/** The text of structured content; image options count by their `text` only. */
function textOf(v: unknown): string {
  if (typeof v === 'string') return v.startsWith('[image ') ? '' : v;
  if (Array.isArray(v)) return v.map(textOf).join(' ');
  if (v && typeof v === 'object') return Object.entries(v as Json).map(([k, x]) => (k === 'image' ? '' : `${k === 'text' ? '' : k} ${textOf(x)}`)).join(' ');
  return v === undefined || v === null ? '' : String(v);
}

/** Share of the description's words found in the state (0..1). */
function affinity(desc: string, state: Set<string>): number {
  const w = words(desc);
  if (w.size === 0) return 0;
  let hits = 0;
  for (const x of w) if (state.has(x)) hits++;
  return hits / w.size;
}

function softmax(scores: number[]): number[] {
  const e = scores.map((s) => Math.exp(4 * s));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => Math.round((x / sum) * 10_000) / 10_000);
}

const argmax = (xs: number[]) => xs.reduce((best, x, i) => (x > xs[best] ? i : best), 0);

/** One piece of the answer text; a boolean piece is emitted as a single token with P(true). */
type Segment = { text: string; pTrue?: number };

function answerSegments(label: string, q: Json, state: Set<string>): Segment[] {
  const head = `${JSON.stringify(label)}:`;
  if (q.type === 'noul') {
    const c = (q.criteria ?? {}) as Json;
    const d = c.true !== undefined || c.false !== undefined ? affinity(textOf(c.true), state) - affinity(textOf(c.false), state) : affinity(textOf(q.instructions), state) - 0.5;
    const p = Math.min(0.99, Math.max(0.01, Math.round((1 / (1 + Math.exp(-4 * d))) * 10_000) / 10_000));
    const answer = p >= 0.5;
    return [{ text: `${head}{"answer":` }, { text: String(answer), pTrue: p }, { text: `,"probability":${Math.round(p * 10) / 10}}` }];
  }
  if (q.type === 'choice') {
    const options = (q.options ?? {}) as Json;
    const keys = Object.keys(options);
    const probs = softmax(keys.map((k) => affinity(`${k} ${textOf(options[k])}`, state)));
    const body = { choice: keys[argmax(probs)], probabilities: Object.fromEntries(keys.map((k, i) => [k, probs[i]])) };
    return [{ text: `${head}${JSON.stringify(body)}` }];
  }
  const levels = (q.levels ?? {}) as Json;
  const keys = Object.keys(levels);
  const probs = softmax(keys.map((k) => affinity(textOf(levels[k]), state)));
  const body = { level: Number(keys[argmax(probs)]), probabilities: Object.fromEntries(keys.map((k, i) => [k, probs[i]])) };
  return [{ text: `${head}${JSON.stringify(body)}` }];
}

interface Token {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: Array<{ token: string; logprob: number; bytes: number[] }>;
}

const bytesOf = (s: string) => [...Buffer.from(s, 'utf8')];

/** Splits segments into tokens (real BPE pieces; a boolean stays one token with its alternatives). */
function tokenize(segments: Segment[], top: number): Token[] {
  const out: Token[] = [];
  for (const s of segments) {
    if (s.pTrue !== undefined) {
      const alts = [
        { token: 'true', logprob: Math.log(s.pTrue), bytes: bytesOf('true') },
        { token: 'false', logprob: Math.log(1 - s.pTrue), bytes: bytesOf('false') },
      ].sort((a, b) => b.logprob - a.logprob);
      const chosen = alts.find((a) => a.token === s.text)!;
      out.push({ token: s.text, logprob: chosen.logprob, bytes: bytesOf(s.text), top_logprobs: alts.slice(0, Math.max(1, top)) });
      continue;
    }
    const pieces = encode(s.text).map((id) => decode([id]));
    const parts = pieces.join('') === s.text ? pieces : [s.text]; // a split inside a UTF-8 character: keep it whole
    for (const p of parts) out.push({ token: p, logprob: 0, bytes: bytesOf(p), top_logprobs: top > 0 ? [{ token: p, logprob: 0, bytes: bytesOf(p) }] : [] });
  }
  return out;
}

/** The decision prompt's state and questions, as the gateway lays them out in the user message. */
function readPrompt(messages: Array<{ role: string; content?: unknown }>): { state: string; questions: Json; images: number; texts: string[] } {
  const texts: string[] = [];
  let state = '';
  let questions: Json = {};
  let images = 0;
  for (const m of messages) {
    const parts: Part[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? (m.content as Part[]) : [];
    for (const p of parts) {
      if (p.type === 'image_url') images++;
      if (p.type !== 'text' || typeof p.text !== 'string') continue;
      texts.push(p.text);
      if (m.role !== 'user') continue;
      if (p.text.startsWith('State:\n')) state = p.text.slice(7);
      if (p.text.startsWith('Questions:\n')) {
        try {
          questions = JSON.parse(p.text.slice(11)) as Json;
        } catch {
          questions = {};
        }
      }
    }
  }
  return { state, questions, images, texts };
}

/** A chat.completion answering a decision prompt. */
export function decisionCompletion(body: Json, model: string, k: Knobs): Json {
  const messages = (body.messages as Array<{ role: string; content?: unknown }>) ?? [];
  const prompt = readPrompt(messages);
  const stateWords = words(prompt.state);
  const segments: Segment[] = [{ text: '{' }];
  Object.entries(prompt.questions).forEach(([label, q], i) => {
    if (i > 0) segments.push({ text: ',' });
    segments.push(...answerSegments(label, q as Json, stateWords));
  });
  segments.push({ text: '}' });
  if (k.badDecision === 'not_json') segments.splice(0, segments.length, { text: 'I think the answer is probably yes.' });
  if (k.badDecision === 'wrong_shape') segments.splice(0, segments.length, { text: JSON.stringify({ answers: 'yes' }) });

  const wantLogprobs = body.logprobs === true && !k.noLogprobs;
  const top = typeof body.top_logprobs === 'number' ? body.top_logprobs : 0;
  let tokens = tokenize(segments, top);
  const maxTokens = (body.max_completion_tokens ?? body.max_tokens) as number | undefined;
  const truncated = typeof maxTokens === 'number' && maxTokens > 0 && tokens.length > maxTokens;
  if (truncated) tokens = tokens.slice(0, maxTokens);
  const content = tokens.map((t) => t.token).join('');
  const promptTokens = prompt.texts.reduce((s, t) => s + encode(t).length, 0) + 3 * messages.length + IMAGE_TOKENS * prompt.images;
  return {
    id: `chatcmpl-simdec${Date.now().toString(36)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null },
        logprobs: wantLogprobs ? { content: tokens, refusal: null } : null,
        finish_reason: truncated ? 'length' : 'stop',
      },
    ],
    usage: { prompt_tokens: promptTokens, completion_tokens: tokens.length, total_tokens: promptTokens + tokens.length, ...k.usageExtra },
  };
}
