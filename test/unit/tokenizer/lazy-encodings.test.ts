import { expect } from 'chai';
import { execFileSync } from 'child_process';
import path from 'path';
import { countTokens as cl100kCount } from 'gpt-tokenizer/encoding/cl100k_base';

const dist = path.resolve(__dirname, '..', '..', '..');

/** Runs `body` in a fresh Node process (this one has loaded encodings through other tests) and parses its JSON output. */
function fresh(body: string): { loaded: string[]; encodingModules: string[]; [k: string]: unknown } {
  const script = `
    const path = require('path');
    const dist = ${JSON.stringify(dist)};
    const out = {};
    ${body}
    const { loadedEncodings } = require(path.join(dist, 'shared/tokenizer/profiles.js'));
    out.loaded = loadedEncodings();
    out.encodingModules = Object.keys(require.cache).filter((k) => /gpt-tokenizer[\\\\/].*encoding[\\\\/]/.test(k) && /(o200k|cl100k|p50k|r50k)_base/.test(k)).map((k) => /(o200k|cl100k|p50k|r50k)_base/.exec(k)[0]);
    out.encodingModules = [...new Set(out.encodingModules)].sort();
    process.stdout.write(JSON.stringify(out));`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
}

describe('tokenizer encodings load lazily, each on its first use', () => {
  it('loading the web app (routes, schemas, token-count pool) loads no encoding', () => {
    const out = fresh(`require(path.join(dist, 'api/app.js')); require(path.join(dist, 'shared/tokenizer/pool.js'));`);
    expect(out.loaded).to.deep.equal([]);
    expect(out.encodingModules).to.deep.equal([]);
  });

  it('counting under cl100k_base loads cl100k_base only, and counts as the encoding does', () => {
    const out = fresh(`
      const { countTextTokens } = require(path.join(dist, 'shared/tokenizer/bounded.js'));
      out.n = countTextTokens('cl100k_base', 'hello world, hello tokens');
      out.n2 = countTextTokens('cl100k_base', 'again');`);
    expect(out.loaded).to.deep.equal(['cl100k_base']);
    expect(out.encodingModules).to.deep.equal(['cl100k_base']);
    expect(out.n).to.equal(cl100kCount('hello world, hello tokens'));
  });

  it('an unknown or missing profile falls back to o200k_base and loads only it', () => {
    const out = fresh(`
      const { tokenizerFor } = require(path.join(dist, 'shared/tokenizer/profiles.js'));
      out.same = tokenizerFor('llama-sp') === tokenizerFor(undefined) && tokenizerFor('toString') === tokenizerFor('o200k_base');`);
    expect(out.same).to.equal(true);
    expect(out.loaded).to.deep.equal(['o200k_base']);
    expect(out.encodingModules).to.deep.equal(['o200k_base']);
  });
});
