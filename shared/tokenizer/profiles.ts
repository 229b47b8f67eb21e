import * as o200k from 'gpt-tokenizer/encoding/o200k_base';
import * as cl100k from 'gpt-tokenizer/encoding/cl100k_base';
import * as p50k from 'gpt-tokenizer/encoding/p50k_base';
import * as r50k from 'gpt-tokenizer/encoding/r50k_base';

type Encoder = {
  countTokens(text: string): number;
  isWithinTokenLimit(text: string, limit: number, opts?: { disallowedSpecial?: Set<string> }): number | false;
};

/** Tokenizer profiles by name (a model's `tokenizer`); an unknown name falls back to o200k_base. */
const PROFILES: Record<string, Encoder> = {
  o200k_base: o200k,
  cl100k_base: cl100k,
  p50k_base: p50k,
  r50k_base: r50k,
};

export function tokenizerFor(profile: string | undefined): Encoder {
  return PROFILES[profile ?? ''] ?? o200k;
}
