import { expect } from 'chai';
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as o200kCount } from 'gpt-tokenizer/encoding/o200k_base';
import { countTextTokens, tokensWithin } from '../../../shared/tokenizer/bounded';

describe('tokensWithin: bounded token counting for embeddings and rerank limits', () => {
  const natural = 'The quick brown fox jumps over the lazy dog. Ünïcödé, 日本語, emoji 🚀 and numbers 12345.';

  it('is exact for natural text, under the model profile', () => {
    expect(tokensWithin('o200k_base', natural, 10_000)).to.equal(o200kCount(natural));
    expect(countTextTokens('o200k_base', natural)).to.equal(o200kCount(natural));
    expect(tokensWithin('cl100k_base', natural, 10_000)).to.equal(countTokens(natural));
  });

  it('answers false one token over the limit, the count at the limit, never a truncated count', () => {
    const text = 'word '.repeat(100).trim(); // 100 tokens
    expect(tokensWithin('o200k_base', text, 100)).to.equal(100);
    expect(tokensWithin('o200k_base', text, 99)).to.equal(false);
    expect(tokensWithin('o200k_base', '', 1)).to.equal(0);
  });

  it('treats special-token text as text instead of throwing', () => {
    expect(tokensWithin('o200k_base', 'a <|endoftext|> b', 100)).to.be.a('number');
    // count_tokens and decision input counting share it: special-token text must not throw there either.
    expect(countTextTokens('cl100k_base', 'a <|endoftext|> b')).to.be.greaterThan(3);
  });

  it('stays fast on hostile input: long single-letter runs and megabytes of text', () => {
    // CPU time of this process, not wall time: another process busy on the same cores slows the
    // clock, not the work, so the budget measures the tokenizer and not the machine's load.
    const cpu = process.cpuUsage();
    expect(tokensWithin('o200k_base', 'x'.repeat(60_000), 512)).to.equal(false);
    expect(tokensWithin('o200k_base', 'x'.repeat(60_000), 100_000)).to.be.a('number');
    expect(tokensWithin('o200k_base', 'y'.repeat(2_000_000), 512)).to.equal(false);
    const used = process.cpuUsage(cpu);
    expect((used.user + used.system) / 1000, 'CPU ms').to.be.below(1500);
  });

  it('counts a 15 MiB space-free run without overflowing the stack, in pieces', () => {
    const n = countTextTokens('o200k_base', 'a'.repeat(15 * 1024 * 1024));
    expect(n).to.be.a('number').and.greaterThan(15 * 1024 * 1024 / 256);
    // mixed: ordinary text around a long run and a long space run stays close to the exact count
    const mixed = `hello there ${'z'.repeat(1000)} and ${' '.repeat(600)} goodbye`;
    expect(Math.abs(countTextTokens('o200k_base', mixed) - o200kCount(mixed))).to.be.at.most(8);
  });
});
