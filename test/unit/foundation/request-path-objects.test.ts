import { expect } from 'chai';
import fs from 'fs';
import path from 'path';

/**
 * The request path builds no object with a spread followed by keys (`{ ...a, k: v }`): V8 gives each
 * such copy a hidden class of its own, which cost the web pod and the worker a large share of their
 * CPU per request (docs/benchmark.md, seventh session). Use `merged()` (shared/merged.ts), a literal
 * with the keys first, or a set on an object the request owns.
 */
const ROOT = path.resolve(__dirname, '../../../..');
const HOT = [
  'api/dispatch/chat.ts',
  'api/dispatch/run-job.ts',
  'api/dispatch/limits.ts',
  'api/dispatch/rate-headers.ts',
  'shared/limits/limits.ts',
  'api/dispatch/route.ts',
  'api/dispatch/step-prices.ts',
  'api/dispatch/target.ts',
  'api/middleware',
  'shared/http/json-checks.ts',
  'shared/tokenizer/media.ts',
  'shared/tokenizer/audio-duration.ts',
  'shared/tokenizer/base64-bytes.ts',
  'api/routes/chat',
  'api/routes/messages/router.ts',
  'api/routes/messages/shared-account-ids.ts',
  'api/routes/responses/router.ts',
  'api/routes/embeddings/router.ts',
  'api/sse.ts',
  'shared/queues',
  'shared/lanes',
  'shared/metering/usage.ts',
  'shared/metering/usage-outbox.ts',
  'workers/pools/chat.worker.ts',
  'workers/pools/detail-tokens.ts',
  'workers/pools/audio-price.ts',
  'workers/pools/service-tier.ts',
  'workers/pools/embeddings.worker.ts',
  'workers/routing',
  'workers/providers/http.ts',
  'workers/providers/sse.ts',
  'workers/providers/openai/chatComplete.ts',
  'workers/providers/openai/refuse.ts',
  'workers/providers/openai/strict-fallback.ts',
  'workers/providers/openai/embed.ts',
  'workers/providers/anthropic/messages.ts',
  'workers/providers/unsigned-call-ids.ts',
];
/** `{ ...expr,` then a key (not another spread), across lines. */
const SPREAD_THEN_KEY = /\{\s*\.\.\.[^,{}]+,\s*(?!\.\.\.)[A-Za-z_'"[]/g;

function files(rel: string): string[] {
  const abs = path.join(ROOT, rel);
  if (fs.statSync(abs).isFile()) return [abs];
  return fs.readdirSync(abs, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => path.join(abs, f));
}

describe('objects on the request path (no spread followed by keys)', () => {
  it('finds none in the files every chat or embeddings request runs through', () => {
    const found: string[] = [];
    for (const rel of HOT) {
      for (const file of files(rel)) {
        const text = fs.readFileSync(file, 'utf8');
        for (const m of text.matchAll(SPREAD_THEN_KEY)) {
          const line = text.slice(0, m.index).split('\n').length;
          found.push(`${path.relative(ROOT, file)}:${line}: ${m[0].replace(/\s+/g, ' ')}`);
        }
      }
    }
    expect(found).to.deep.equal([]);
  });

  it('the pattern finds what it is meant to', () => {
    expect('const x = { ...a, b: 1 };'.match(SPREAD_THEN_KEY)).to.have.length(1);
    expect('const x = {\n  ...opts.data,\n  requestId: id,\n};'.match(SPREAD_THEN_KEY)).to.have.length(1);
    expect('const x = { b: 1, ...a };'.match(SPREAD_THEN_KEY)).to.equal(null);
    expect('const x = { ...a, ...b };'.match(SPREAD_THEN_KEY)).to.equal(null);
  });
});
