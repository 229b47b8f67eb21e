import http from 'http';
import { expect } from 'chai';
import { fetchUpstream, failureInfo } from '../../../workers/providers/http';
import { ApiError } from '../../../shared/errors/ApiError';
import { durationMs, googleErrorHints } from '../../../workers/providers/gemini/errors';

/** Error bodies as the Gemini API sends them (google.rpc.Status; ai.google.dev/gemini-api/docs/troubleshooting). */
const status = (code: number, name: string, message: string, details: unknown[] = []) => JSON.stringify({ error: { code, message, status: name, details } });
const RATE_LIMITED = status(429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota. Please retry in 1.2s.', [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1.2s' }]);
const PRECONDITION = status(400, 'FAILED_PRECONDITION', 'User location is not supported for the API use.');

/** A local upstream answering the given bodies in turn; records when each call came. */
async function replay(answers: Array<[number, string]>): Promise<{ url: string; at: number[]; close(): Promise<void> }> {
  const at: number[] = [];
  const server = http.createServer((req, res) => {
    req.resume().on('end', () => {
      const [code, body] = answers[Math.min(at.length, answers.length - 1)];
      at.push(Date.now());
      res.writeHead(code, { 'content-type': 'application/json' }).end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`, at, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const policy = (extra = {}) => ({ signal: new AbortController().signal, deadline: Date.now() + 15_000, errorHints: googleErrorHints, ...extra });

describe('gemini error bodies (google.rpc.Status details)', () => {
  it('reads RetryInfo durations, API_KEY_INVALID and FAILED_PRECONDITION', () => {
    expect(durationMs('53s')).to.equal(53_000);
    expect(durationMs('53.016342224s')).to.equal(53_016);
    expect(durationMs('soon')).to.equal(undefined);
    expect(googleErrorHints(429, JSON.parse(RATE_LIMITED))).to.deep.equal({ retryAfterMs: 1200 });
    expect(googleErrorHints(400, JSON.parse(PRECONDITION))).to.deep.equal({ misconfigured: true });
    const badKey = status(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }]);
    expect(googleErrorHints(400, JSON.parse(badKey))).to.deep.equal({ keyRefused: true });
    expect(googleErrorHints(400, { error: { status: 'INVALID_ARGUMENT', message: 'bad field' } })).to.deep.equal({});
  });

  it('fetchUpstream waits the RetryInfo delay before its retry, and reports it to the router', async () => {
    const up = await replay([[429, RATE_LIMITED], [200, '{}']]);
    try {
      const res = await fetchUpstream(up.url, { method: 'POST', body: '{}' }, policy({ retries: 1 }));
      expect(res.status).to.equal(200);
      expect(up.at[1] - up.at[0], 'the 1.2 s Google asked for').to.be.at.least(1150);
    } finally {
      await up.close();
    }
    const once = await replay([[429, RATE_LIMITED]]);
    try {
      const err = await fetchUpstream(once.url, { method: 'POST', body: '{}' }, policy({ retries: 0 })).catch((e: unknown) => e);
      expect(err).to.include({ status: 429, code: 'upstream_rate_limited' });
      expect((err as ApiError).headers['Retry-After'], '1.2 s rounded up').to.equal('2');
      expect(failureInfo(err)).to.deep.equal({ status: 429, retryAfterMs: 1200 });
    } finally {
      await once.close();
    }
  });

  it("FAILED_PRECONDITION (the project's country or billing) is the operator's: 502 upstream_error, not the caller's 400", async () => {
    const up = await replay([[400, PRECONDITION]]);
    try {
      const err = await fetchUpstream(up.url, { method: 'POST', body: '{}' }, policy()).catch((e: unknown) => e);
      expect(err).to.include({ status: 502, code: 'upstream_error' });
      expect((err as Error).message).to.equal('The upstream is not set up to serve this model (status 400): User location is not supported for the API use.');
    } finally {
      await up.close();
    }
  });
});
