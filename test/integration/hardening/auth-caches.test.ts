import crypto from 'crypto';
import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { adminCall, bearer } from '../../helpers/admin';
import { startAdmin } from '../../helpers/admin';
import { ApiKey, Project } from '../../../shared/db/models';
import { Directory } from '../../../shared/tenancy/directory';
import { config } from '../../../shared/config/env';

const chat = { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] };
const unknownKey = () => `svc_${crypto.randomBytes(24).toString('hex')}`;
let ipSeq = 0;
/** A client address of the test's own (the test env trusts X-Forwarded-For from loopback). */
const freshIp = () => `198.51.100.${++ipSeq}`;

/** Counts Postgres finds of a model while `fn` runs. */
async function findsOf(model: typeof ApiKey | typeof Project, fn: () => Promise<void>): Promise<number> {
  let n = 0;
  const name = `count-${crypto.randomBytes(4).toString('hex')}`;
  (model as typeof ApiKey).addHook('beforeFind', name, () => void n++);
  try {
    await fn();
  } finally {
    (model as typeof ApiKey).removeHook('beforeFind', name);
  }
  return n;
}

describe('per-pod caches: bounded, negative lookups cached briefly', () => {
  let o: TestOrg;
  before(async () => {
    o = await buildOrg(env().redis);
  });

  it('unknown keys: one Postgres lookup per unique key within the negative TTL, however often sent', async () => {
    const ip = freshIp();
    const keys = Array.from({ length: 15 }, unknownKey);
    const finds = await findsOf(ApiKey, async () => {
      for (let round = 0; round < 3; round++) {
        for (const k of keys) {
          const r = await call('POST', '/v1/chat/completions', { headers: { ...keyHeader(k), 'x-forwarded-for': ip }, json: chat });
          expect(r.status).to.equal(401);
          expect(r.body.error.code).to.equal('INVALID_API_KEY');
        }
      }
    });
    expect(finds).to.equal(keys.length);
  });

  it('unique SERVICE-PROJECT-ID values: one lookup each, then answered from the cache', async () => {
    const ids = Array.from({ length: 15 }, () => crypto.randomUUID());
    const finds = await findsOf(Project, async () => {
      for (let round = 0; round < 2; round++) {
        for (const id of ids) {
          const r = await call('POST', '/v1/chat/completions', { headers: { ...keyHeader(o.key), 'SERVICE-PROJECT-ID': id }, json: chat });
          expect(r.status).to.equal(400);
          expect(r.body.error.code).to.equal('invalid_project');
        }
      }
    });
    expect(finds).to.equal(ids.length);
  });

  it("the directory never holds more than its bound, and forgets 'unknown' after the negative TTL", async () => {
    const dir = new Directory(env().redis, { maxEntries: 50, negativeTtlMs: 300 });
    await dir.sync();
    for (let i = 0; i < 400; i++) await dir.project(o.org.id, `p-${i}`);
    expect(dir.size).to.equal(50);
    expect(env().gw.ctx.directory.size).to.be.at.most(config().cacheMaxEntries);
    const finds = await findsOf(Project, async () => {
      await dir.project(o.org.id, 'p-399'); // cached "unknown"
      await new Promise((r) => setTimeout(r, 400));
      await dir.project(o.org.id, 'p-399'); // expired: looked up again
    });
    expect(finds).to.equal(1);
  });

  it('a known value is still cached after a flood of unknown ones (least recently used go first)', async () => {
    const dir = new Directory(env().redis, { maxEntries: 20 });
    await dir.sync();
    await dir.project(o.org.id, 'proj');
    for (let i = 0; i < 100; i++) {
      await dir.project(o.org.id, `x-${i}`);
      await dir.project(o.org.id, 'proj'); // in use: stays
    }
    expect(await findsOf(Project, async () => void (await dir.project(o.org.id, 'proj')))).to.equal(0);
  });

  it('a flood of unknown values never pushes out a known one, even one not used meanwhile (they are kept apart)', async () => {
    const dir = new Directory(env().redis, { maxEntries: 20 });
    await dir.sync();
    await dir.project(o.org.id, 'proj');
    for (let i = 0; i < 100; i++) await dir.project(o.org.id, `x-${i}`);
    expect(dir.size, 'the bound holds for both').to.be.at.most(40);
    expect(await findsOf(Project, async () => void (await dir.project(o.org.id, 'proj'))), 'still cached').to.equal(0);
  });

  it('a project header that cannot be an id or a slug (15 KB) is neither looked up nor cached: 400 invalid_project', async () => {
    const dir = new Directory(env().redis, { maxEntries: 20 });
    await dir.sync();
    const before = dir.size;
    const finds = await findsOf(Project, async () => {
      expect(await dir.project(o.org.id, 'x'.repeat(15_000))).to.equal(null);
      expect(await dir.project(o.org.id, 'Not A Slug!')).to.equal(null);
    });
    expect(finds).to.equal(0);
    expect(dir.size).to.equal(before);
    const r = await call('POST', '/v1/chat/completions', { headers: { ...keyHeader(o.key), 'SERVICE-PROJECT-ID': 'y'.repeat(15_000) }, json: chat });
    expect(r.status).to.equal(400);
    expect(r.body.error.code).to.equal('invalid_project');
    expect(r.text.length, 'the header is not echoed whole').to.be.below(2_000);
  });
});

describe('failed authentications are rate-limited per client address', () => {
  it('answers 429 too_many_auth_failures with Retry-After past the limit, and still lets a valid key through', async () => {
    const o = await buildOrg(env().redis);
    const ip = freshIp();
    const limit = config().authFailureLimit;
    const bad = unknownKey();
    for (let i = 0; i < limit; i++) {
      const r = await call('POST', '/v1/chat/completions', { headers: { ...keyHeader(bad), 'x-forwarded-for': ip }, json: chat });
      expect(r.status, `failure ${i + 1}`).to.equal(401);
    }
    const limited = await call('POST', '/v1/chat/completions', { headers: { ...keyHeader(unknownKey()), 'x-forwarded-for': ip }, json: chat });
    expect(limited.status).to.equal(429);
    expect(limited.body.error.code).to.equal('too_many_auth_failures');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).to.be.within(1, config().authFailureWindowSeconds);
    // A valid key from the same address works; another address is not affected.
    const ok = await call('POST', '/v1/chat/completions', { headers: { ...keyHeader(o.key), 'x-forwarded-for': ip, 'SERVICE-PROJECT-ID': 'nope' }, json: chat });
    expect(ok.status).to.equal(400);
    expect(ok.body.error.code).to.equal('invalid_project');
    const other = await call('POST', '/v1/chat/completions', { headers: { ...keyHeader(bad), 'x-forwarded-for': freshIp() }, json: chat });
    expect(other.status).to.equal(401);
  });

  it('counts unknown management credentials on the admin API too', async () => {
    const admin = await startAdmin();
    try {
      const ip = freshIp();
      const limit = config().authFailureLimit;
      let last = 0;
      for (let i = 0; i <= limit; i++) {
        const r = await call('GET', '/admin/v1/plans', { base: admin.url, headers: { ...bearer(`svc_platform_${crypto.randomBytes(16).toString('hex')}`), 'x-forwarded-for': ip } });
        last = r.status;
        if (i < limit) expect(r.status).to.equal(401);
        else expect(r.body.error.code).to.equal('too_many_auth_failures');
      }
      expect(last).to.equal(429);
      // A missing credential is not a guess: still 401.
      expect((await adminCall(admin.url, null, 'GET', '/admin/v1/plans')).status).to.equal(401);
    } finally {
      await admin.close();
    }
  });
});
