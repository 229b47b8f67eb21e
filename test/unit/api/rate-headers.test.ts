import { expect } from 'chai';
import { goDuration, rateLimitHeaders } from '../../../api/dispatch/rate-headers';

describe('rate-limit headers (api/dispatch/rate-headers.ts)', () => {
  it('writes OpenAI’s reset as a Go duration: ms under a second, seconds with their fraction, minutes and seconds', () => {
    expect([59, 999, 1000, 1500, 17_280, 59_999, 60_000].map(goDuration)).to.deep.equal(['59ms', '999ms', '1s', '1.5s', '17.28s', '59.999s', '1m0s']);
  });

  it('names each limit the key has in the dialect’s own headers; remaining never below 0; Anthropic’s reset an RFC 3339 time', () => {
    const w = { requests: { limit: 10, counted: 3 }, tokens: { limit: 100, counted: 120 }, resetsAt: Date.UTC(2026, 0, 2, 3, 5), msLeft: 1500 };
    expect(rateLimitHeaders(false, w)).to.deep.equal({
      'x-ratelimit-limit-requests': '10', 'x-ratelimit-remaining-requests': '7', 'x-ratelimit-reset-requests': '1.5s',
      'x-ratelimit-limit-tokens': '100', 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '1.5s',
    });
    expect(rateLimitHeaders(true, { requests: undefined, tokens: w.tokens, resetsAt: w.resetsAt, msLeft: w.msLeft })).to.deep.equal({
      'anthropic-ratelimit-tokens-limit': '100', 'anthropic-ratelimit-tokens-remaining': '0', 'anthropic-ratelimit-tokens-reset': '2026-01-02T03:05:00Z',
    });
  });
});
