import fc from 'fast-check';
import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { rawRequest, type RawReply } from '../../helpers/raw-http';
import { FUZZ_PARAMS, fuzzTimeout, fuzzHeaders, jsonBodies, multipartBodies, nastyString, problemOf } from '../../helpers/fuzz';
import { usageSettled } from '../../helpers/usage';
import { db } from '../../../shared/db/sequelize';
import { UsageEvent } from '../../../shared/db/models';

const anthropic = { 'anthropic-version': '2023-06-01' };

describe('fuzzing the files and batches routes (fast-check): never a 5xx, a bare error or a leak', function () {
  this.timeout(fuzzTimeout(120_000));
  let o: TestOrg;
  const findings: string[] = [];
  const statuses = new Map<string, Set<number>>();

  async function send(method: string, path: string, headers: Record<string, string>, body?: string | Buffer): Promise<RawReply> {
    const r = await rawRequest(env().gw.url, method, path, { headers: { 'SERVICE-API-KEY': o.key, ...headers }, body });
    const problem = problemOf(r, method) ?? (r.text.includes(o.key) ? 'the API key echoed' : undefined);
    if (problem) findings.push(`${method} ${path} body=${JSON.stringify(String(body ?? '').slice(0, 200))} → ${r.status}: ${problem} ${r.text.slice(0, 200)}`);
    statuses.set(path.split('?')[0], (statuses.get(path.split('?')[0]) ?? new Set()).add(r.status));
    return r;
  }

  before(async () => {
    o = await buildOrg(env().redis, { entitlements: { background: true, batch_max_in_progress: 1000 } });
  });
  after(async () => {
    // nothing the fuzzer created may run later in the suite
    await db().query(`UPDATE batches SET status = 'cancelled', cancelled_at = now() WHERE org_id = :org`, { replacements: { org: o.org.id } });
  });

  it('POST /v1/files: broken multipart parts, names and files', async () => {
    const file = Buffer.from(JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/embeddings', body: { model: 'sim-embed', input: 'x' } }) + '\n');
    await fc.assert(
      fc.asyncProperty(multipartBodies(['purpose'], 'file', file), async (m) => (await send('POST', '/v1/files', { 'content-type': m.contentType }, m.body)).status < 500),
      FUZZ_PARAMS(60),
    );
  });

  it('POST /v1/batches and /v1/messages/batches: malformed bodies and headers', async () => {
    const up = await rawRequest(env().gw.url, 'POST', '/v1/files', {
      headers: { 'SERVICE-API-KEY': o.key, 'content-type': 'multipart/form-data; boundary=XyZ' },
      body: Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.jsonl"\r\n\r\n{"custom_id":"a","method":"POST","url":"/v1/embeddings","body":{}}\n\r\n--XyZ--\r\n'),
    });
    expect(up.status, up.text).to.equal(200);
    const routes: Array<[string, unknown, Record<string, string>]> = [
      ['/v1/batches', { input_file_id: up.body.id, endpoint: '/v1/embeddings', completion_window: '24h', metadata: { a: 'b' } }, {}],
      ['/v1/messages/batches', { requests: [{ custom_id: 'a', params: { model: 'sim-claude', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] } }] }, anthropic],
    ];
    for (const [path, template, extra] of routes) {
      await fc.assert(
        fc.asyncProperty(jsonBodies(template), fuzzHeaders, async (body, headers) => (await send('POST', path, { 'content-type': 'application/json', ...extra, ...headers }, body)).status < 500),
        FUZZ_PARAMS(70),
      );
      const seen = [...statuses.get(path)!];
      expect(seen, `${path}: validation reached (${seen})`).to.include(400);
    }
  });

  it('ids, cursors and methods in paths and queries', async () => {
    const enc = (s: string) => {
      try {
        return encodeURIComponent(s);
      } catch {
        return '%ED%A0%80';
      }
    };
    const seg = fc.oneof(nastyString.map(enc), fc.constantFrom('..', '%2e%2e', '%00', '%ff', '%', 'file-', 'batch_', 'msgbatch_', 'x'.repeat(300)));
    const path = fc.oneof(
      seg.map((s) => `/v1/files/${s}`),
      seg.map((s) => `/v1/files/${s}/content`),
      seg.map((s) => `/v1/batches/${s}`),
      seg.map((s) => `/v1/batches/${s}/cancel`),
      seg.map((s) => `/v1/messages/batches/${s}`),
      seg.map((s) => `/v1/messages/batches/${s}/results`),
      seg.map((s) => `/v1/messages/batches/${s}/cancel`),
      fc.tuple(fc.constantFrom('/v1/files', '/v1/batches', '/v1/messages/batches'), fc.constantFrom('limit', 'after', 'after_id', 'before_id', 'order', 'purpose'), seg).map(([p, k, v]) => `${p}?${k}=${v}`),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('GET', 'POST', 'DELETE', 'PUT'), path, async (method, p) => (await send(method, p, anthropic, method === 'POST' || method === 'PUT' ? '{}' : undefined)).status < 500),
      FUZZ_PARAMS(200),
    );
  });

  it('no finding, and nothing billed', async () => {
    expect(findings, findings.slice(0, 5).join('\n')).to.deep.equal([]);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(0);
  });
});
