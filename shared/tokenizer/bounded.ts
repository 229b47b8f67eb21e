import { tokenizerFor } from './profiles';

/** No token of the gpt-tokenizer encodings is longer than this many UTF-8 bytes. */
const MAX_TOKEN_BYTES = 128;
/** Runs of this many characters or more are counted in pieces of this size (see below). */
const LONG_RUN = 256;
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
  for (const segment of segments(text)) if (!add(segment)) return false;
  return total;
}

/** JavaScript's `\s`, by code unit. */
function isSpace(c: number): boolean {
  return c <= 0x20 ? c === 0x20 || (c >= 0x09 && c <= 0x0d) : c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/**
 * The text in pieces to tokenize: ordinary stretches whole, and every run of LONG_RUN characters of
 * one class (space or not) as its own piece. One linear scan, no regular expression (a regex over a
 * 15 MiB run overflows the stack).
 */
function* segments(text: string): Generator<string> {
  let segStart = 0;
  let runStart = 0;
  let runSpace = text.length ? isSpace(text.charCodeAt(0)) : false;
  for (let i = 0; i < text.length; i++) {
    const sp = isSpace(text.charCodeAt(i));
    if (sp !== runSpace) {
      runSpace = sp;
      runStart = i;
    } else if (i - runStart + 1 === LONG_RUN) {
      if (runStart > segStart) yield text.slice(segStart, runStart);
      yield text.slice(runStart, i + 1);
      segStart = runStart = i + 1;
    }
  }
  if (segStart < text.length) yield text.slice(segStart);
}

/**
 * Tokens of `text` under the named profile, for counting without a limit (count_tokens, decision
 * input). Same guards as `tokensWithin`: special-token text counts as text, long runs in pieces.
 */
export function countTextTokens(profile: string | undefined, text: string): number {
  return tokensWithin(profile, text, Number.MAX_SAFE_INTEGER) as number;
}
