import zlib from 'zlib';
import fc from 'fast-check';
import type { RawReply } from './raw-http';

/**
 * Property-based fuzzing through the running app (fast-check): arbitraries for malformed JSON bodies,
 * multipart bodies, headers and paths, and the properties every answer must hold.
 */

/** Strings that have broken parsers, validators or Postgres before. */
const NASTY_STRINGS = ['', ' ', '\u0000', 'a\u0000b', '\ud800', '\udfff', 'constructor', '__proto__', 'toString', 'hasOwnProperty', '😀', '\u202e', '%00', '../../etc/passwd', 'null', '-1', '1e309', 'x'.repeat(5000)];
const NASTY_VALUES: unknown[] = [null, true, false, 0, -1, -0, 1.5, 2 ** 53 + 1, 1e308, -1e308, [], {}, [[]], [{}], { '': '' }];

export const nastyString = fc.oneof(fc.constantFrom(...NASTY_STRINGS), fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ maxLength: 20 }));
export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(...NASTY_VALUES) },
  { weight: 2, arbitrary: nastyString },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double() },
);
export const nastyKey = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', '', 'a\u0000b', '\ud800', 'model', 'stream', 'n'), fc.string({ maxLength: 12 }));

/** Every path (as key lists) of the objects and arrays inside a JSON value. */
function paths(v: unknown, at: Array<string | number> = []): Array<Array<string | number>> {
  if (Array.isArray(v)) return [at, ...v.flatMap((x, i) => paths(x, [...at, i]))];
  if (v && typeof v === 'object') return [at, ...Object.entries(v).flatMap(([k, x]) => paths(x, [...at, k]))];
  return [at];
}

type Mutation = { path: Array<string | number>; op: 'delete' | 'replace' | 'add'; key: string; value: unknown };

/**
 * The template with the mutations applied, on copies: of the template, and of each value as it goes
 * in. fast-check hands out the same instance of a constant (`[]`, `[{}]` of NASTY_VALUES) to every
 * draw, so a value put in as it is could later be pushed into itself (a circular body that
 * JSON.stringify refuses) or changed for every later run.
 */
function apply(template: unknown, mutations: Mutation[]): unknown {
  const root = structuredClone(template) as Record<string | number, unknown>;
  for (const drawn of mutations) {
    const m = { ...drawn, value: structuredClone(drawn.value) };
    if (m.path.length === 0) {
      if (m.op === 'replace') return m.value;
      if (m.op === 'add' && root && typeof root === 'object' && !Array.isArray(root)) Object.defineProperty(root, m.key, { value: m.value, enumerable: true, configurable: true, writable: true });
      continue;
    }
    let parent: unknown = root;
    for (const p of m.path.slice(0, -1)) parent = parent && typeof parent === 'object' ? (parent as Record<string | number, unknown>)[p] : undefined;
    if (!parent || typeof parent !== 'object') continue;
    const last = m.path[m.path.length - 1];
    const obj = parent as Record<string | number, unknown>;
    if (m.op === 'delete') {
      if (Array.isArray(obj) && typeof last === 'number') obj.splice(last, 1);
      else delete obj[last];
    } else if (m.op === 'replace') obj[last] = m.value;
    else {
      const target = obj[last];
      if (target && typeof target === 'object' && !Array.isArray(target)) Object.defineProperty(target, m.key, { value: m.value, enumerable: true, configurable: true, writable: true });
      else if (Array.isArray(target)) target.push(m.value);
    }
  }
  return root;
}

/** A valid body with a few fields deleted, replaced by nasty values, or joined by nasty keys. */
export function mutated(template: unknown): fc.Arbitrary<unknown> {
  const all = paths(template);
  const mutation = fc.record({ path: fc.constantFrom(...all), op: fc.constantFrom('delete' as const, 'replace' as const, 'add' as const), key: nastyKey, value: nastyValue });
  return fc.array(mutation, { minLength: 0, maxLength: 3 }).map((muts) => apply(template, muts));
}

/** A raw body: mostly JSON of a mutated template, sometimes not JSON at all. */
export function jsonBodies(template: unknown): fc.Arbitrary<string> {
  const json = JSON.stringify(template);
  return fc.oneof(
    { weight: 6, arbitrary: mutated(template).map((v) => JSON.stringify(v) ?? 'null') },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.nat({ max: Math.max(0, json.length - 1) }).map((n) => json.slice(0, n)) }, // truncated
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 5000 }).map((d) => `${'['.repeat(d)}${']'.repeat(d)}`) },
    { weight: 1, arbitrary: fc.integer({ min: 100, max: 5000 }).map((d) => `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`) }, // deep objects
    { weight: 1, arbitrary: fc.integer({ min: 100, max: 5000 }).map((d) => `{"model":"sim-chat","messages":${'['.repeat(d)}${']'.repeat(d)}}`) },
    { weight: 1, arbitrary: fc.constantFrom('', 'null', '[]', '"x"', '{"a":1,"a":2}', '{"__proto__":{"polluted":1}}', '{"model":"sim-chat"', '\ufeff{}', '{"stream":true}') },
  );
}

/** Content codings, real and made up, in the spellings clients send. */
const ENCODINGS = ['gzip', 'deflate', 'br', 'GZIP', 'x-gzip', 'identity', 'compress', 'zstd', 'gzip, br', 'gzip, gzip', 'bogus', '', ' ', 'deflate;q=1'];
// A Map: fast-check's strings include '__proto__' and 'constructor', which an object literal would answer.
const compress = new Map<string, (b: Buffer) => Buffer>([
  ['gzip', zlib.gzipSync],
  ['x-gzip', zlib.gzipSync],
  ['deflate', zlib.deflateSync],
  ['br', zlib.brotliCompressSync],
]);

/**
 * A body with a `content-encoding`: properly compressed (maybe truncated or with flipped bytes), the
 * plain body under a coding it does not have, random garbage, or a coding nobody knows.
 */
export function encodedBodies(template: unknown): fc.Arbitrary<{ body: Buffer; encoding: string }> {
  return fc
    .record({
      json: jsonBodies(template),
      encoding: fc.oneof(fc.constantFrom(...ENCODINGS), fc.string({ maxLength: 12 }).filter((e) => /^[\t\x20-\x7e]*$/.test(e))),
      mode: fc.constantFrom('compressed', 'truncated', 'flipped', 'plain', 'garbage'),
      garbage: fc.uint8Array({ maxLength: 300 }),
      at: fc.nat(),
    })
    .map(({ json, encoding, mode, garbage, at }) => {
      const plain = Buffer.from(json);
      const packed = (compress.get(encoding.toLowerCase()) ?? ((b: Buffer) => b))(plain);
      if (mode === 'compressed') return { body: packed, encoding };
      if (mode === 'truncated') return { body: packed.subarray(0, at % (packed.length + 1)), encoding };
      if (mode === 'flipped') {
        const b = Buffer.from(packed);
        if (b.length) b[at % b.length] ^= 0xff;
        return { body: b, encoding };
      }
      return { body: mode === 'plain' ? plain : Buffer.from(garbage), encoding };
    });
}

const CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'application/json; charset=latin1', 'text/plain', '', 'application/x-www-form-urlencoded', 'multipart/form-data', 'multipart/form-data; boundary=', 'application/vnd.api+json', 'APPLICATION/JSON'];

/** Headers around a body: content type, dialect and project headers, junk keys, each maybe absent. */
export const fuzzHeaders = fc.record(
  {
    'content-type': fc.option(fc.oneof(fc.constantFrom(...CONTENT_TYPES), fc.string({ maxLength: 30 })), { freq: 3, nil: undefined }),
    'anthropic-version': fc.oneof(fc.constant('2023-06-01'), fc.string({ maxLength: 12 })),
    'service-project-id': fc.oneof(fc.uuid(), fc.string({ maxLength: 20 })),
    accept: fc.constantFrom('*/*', 'text/event-stream', 'application/json', 'image/*', ''),
    'x-api-key': fc.string({ maxLength: 20 }),
    'idempotency-key': fc.string({ maxLength: 20 }),
  },
  { requiredKeys: [] },
).map((h) => Object.fromEntries(Object.entries(h).filter((e): e is [string, string] => typeof e[1] === 'string' && /^[\t\x20-\x7e]*$/.test(e[1])))); // what an HTTP client can send

/** Multipart parts: the route's own field names and junk ones, text or random bytes, maybe a file. */
export function multipartBodies(fields: string[], fileField: string, file: Buffer): fc.Arbitrary<{ body: Buffer; boundary: string; contentType: string }> {
  const part = fc.record({
    name: fc.oneof(fc.constantFrom(...fields, fileField), fc.string({ maxLength: 10 })),
    filename: fc.option(fc.oneof(fc.constantFrom('a.png', 'a.wav', '../x', '', 'a\u0000.png'), fc.string({ maxLength: 10 })), { nil: undefined }),
    type: fc.option(fc.constantFrom('image/png', 'audio/wav', 'text/plain', 'application/octet-stream', ''), { nil: undefined }),
    data: fc.oneof(nastyString.map((s) => Buffer.from(s)), fc.uint8Array({ maxLength: 300 }).map((u) => Buffer.from(u)), fc.constant(file), fc.nat({ max: file.length }).map((n) => file.subarray(0, n))),
  });
  return fc.record({ parts: fc.array(part, { maxLength: 6 }), cut: fc.option(fc.nat(), { nil: undefined }), badBoundary: fc.boolean() }).map(({ parts, cut, badBoundary }) => {
    const boundary = 'fuzzBoundary7MA4YWxk';
    const chunks: Buffer[] = [];
    for (const p of parts) {
      const disp = `form-data; name="${p.name.replace(/["\r\n]/g, '')}"${p.filename !== undefined ? `; filename="${p.filename.replace(/["\r\n]/g, '')}"` : ''}`;
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disp}\r\n${p.type !== undefined ? `Content-Type: ${p.type}\r\n` : ''}\r\n`), p.data, Buffer.from('\r\n'));
    }
    chunks.push(Buffer.from(`--${boundary}--\r\n`));
    const whole = Buffer.concat(chunks);
    return { body: cut === undefined ? whole : whole.subarray(0, cut % (whole.length + 1)), boundary, contentType: `multipart/form-data; boundary=${badBoundary ? 'other' : boundary}` };
  });
}

/** What is wrong with an answer, if anything: a 5xx, no request id, an error without the JSON envelope, a leak. */
export function problemOf(r: RawReply, method = 'GET'): string | undefined {
  if (r.status >= 500) return `status ${r.status}`;
  if (!r.headers['x-service-request-id']) return 'no x-service-request-id';
  if (r.status >= 400 && method !== 'HEAD') {
    if (!String(r.headers['content-type'] ?? '').startsWith('application/json')) return `error answered as ${r.headers['content-type']}`;
    if (typeof r.body?.error?.code !== 'string' || typeof r.body?.error?.message !== 'string') return 'no {error:{code,message}} envelope';
  }
  if (/\n\s+at .+:\d+:\d+|node_modules\/|\/dist\/(api|shared)\//.test(r.text)) return 'a stack trace or source path leaked';
  return undefined;
}

/** FUZZ_SCALE, at least 1. */
function fuzzScale(): number {
  return Math.max(1, Number(process.env.FUZZ_SCALE) || 1);
}

/** A fuzz suite's mocha timeout, stretched by FUZZ_SCALE as its runs are. */
export function fuzzTimeout(ms: number): number {
  return ms * fuzzScale();
}

/**
 * fast-check settings for a suite that must stay quick: a modest number of runs, no long shrinking.
 * A deeper hunt by hand: FUZZ_SCALE multiplies the runs and the time limit (`FUZZ_SCALE=20 npm test --
 * dist/test/integration/hardening/fuzz-*.test.js`); FUZZ_SEED replays the seed a failure printed.
 */
export const FUZZ_PARAMS = (numRuns: number): fc.Parameters<unknown> => {
  const scale = fuzzScale();
  const seed = Number.parseInt(process.env.FUZZ_SEED ?? '', 10);
  return {
    numRuns: numRuns * scale,
    endOnFailure: false,
    interruptAfterTimeLimit: 20_000 * scale,
    markInterruptAsFailure: false,
    ...(Number.isFinite(seed) ? { seed } : {}),
  };
};
