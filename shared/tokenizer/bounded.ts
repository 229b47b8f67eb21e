import { tokenizerFor } from './profiles';

/** No token of the gpt-tokenizer encodings is longer than this many UTF-8 bytes. */
const MAX_TOKEN_BYTES = 128;
/** Runs of this many characters or more are counted in pieces of this size (see below). */
const LONG_RUN = 256;
const LONG_RUN_RE = new RegExp(`\\S{${LONG_RUN},}|\\s{${LONG_RUN},}`, 'g');
/** Special-token text (`<|endoftext|>`) in user input is ordinary text, not a reason to fail. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * Tokens of `text` under the model's profile, or `false` as soon as they exceed `limit`: the count
 * stops early, never truncates. Two guards keep hostile input cheap. A text of more than
 * `limit × 128` bytes cannot fit (no token is longer), so it fails without tokenizing. BPE is
 * quadratic in the length of one pre-token piece (a 65 KB run of one letter takes seconds), so runs
 * of 256+ non-space (or space) characters are counted in 256-character pieces: exact for natural
 * text, within a token or so per such run otherwise.
 */
export function tokensWithin(profile: string | undefined, text: string, limit: number): number | false {
  if (!text) return 0;
  if (Buffer.byteLength(text, 'utf8') > limit * MAX_TOKEN_BYTES) return false;
  const enc = tokenizerFor(profile);
  let total = 0;
  const add = (segment: string): boolean => {
    if (!segment) return true;
    const n = enc.isWithinTokenLimit(segment, limit - total, AS_TEXT);
    if (n === false) return false;
    total += n;
    return true;
  };
  let last = 0;
  for (const m of text.matchAll(LONG_RUN_RE)) {
    if (!add(text.slice(last, m.index))) return false;
    for (let i = 0; i < m[0].length; i += LONG_RUN) if (!add(m[0].slice(i, i + LONG_RUN))) return false;
    last = m.index + m[0].length;
  }
  return add(text.slice(last)) ? total : false;
}

/**
 * Tokens of `text` under the named profile, for counting without a limit (count_tokens, decision
 * input). Same guards as `tokensWithin`: special-token text counts as text, long runs in pieces.
 */
export function countTextTokens(profile: string | undefined, text: string): number {
  return tokensWithin(profile, text, Number.MAX_SAFE_INTEGER) as number;
}
