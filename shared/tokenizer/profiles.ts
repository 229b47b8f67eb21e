type Encoder = {
  countTokens(text: string): number;
  isWithinTokenLimit(text: string, limit: number, opts?: { disallowedSpecial?: Set<string> }): number | false;
};

/*
 * Each encoding's rank table costs 30-100 MB of heap, so none is loaded at start: an encoding is
 * required on its first use, in the process or thread that counts with it (a web pod that never
 * counts under cl100k/p50k/r50k never holds them). The module paths are literal so bundlers and
 * `npm ls` still see them.
 */
const LOADERS: Record<string, () => Encoder> = {
  o200k_base: () => require('gpt-tokenizer/encoding/o200k_base') as Encoder,
  cl100k_base: () => require('gpt-tokenizer/encoding/cl100k_base') as Encoder,
  p50k_base: () => require('gpt-tokenizer/encoding/p50k_base') as Encoder,
  r50k_base: () => require('gpt-tokenizer/encoding/r50k_base') as Encoder,
};

const loaded = new Map<string, Encoder>();

function load(name: string): Encoder {
  let enc = loaded.get(name);
  if (!enc) {
    enc = LOADERS[name]!();
    loaded.set(name, enc);
  }
  return enc;
}

/** Tokenizer profiles by name (a model's `tokenizer`); an unknown name falls back to o200k_base. */
export function tokenizerFor(profile: string | undefined): Encoder {
  return load(profile && Object.hasOwn(LOADERS, profile) ? profile : 'o200k_base');
}

/** Names of the encodings this process has loaded so far (for tests and diagnostics). */
export function loadedEncodings(): string[] {
  return [...loaded.keys()];
}
