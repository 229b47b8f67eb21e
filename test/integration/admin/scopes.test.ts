import { expect } from 'chai';
import { adminCall, buildAdminToken, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { FAMILIES, ALL_SCOPES, type Family } from '../../../shared/platform/families';
import type { Reply } from '../../helpers/http';

/** For each family: every path it covers (read probes) and one write probe that passes authorization. */
const PROBES: Record<Family, { reads: string[]; write: [string, string, unknown] }> = {
  stats: { reads: ['/stats', '/usage-stats'], write: ['POST', '/stats', {}] },
  organizations: { reads: ['/organizations'], write: ['POST', '/organizations', {}] },
  plans: { reads: ['/plans'], write: ['POST', '/plans', {}] },
  providers: { reads: ['/providers'], write: ['POST', '/providers', {}] },
  'platform-credentials': { reads: ['/platform-credentials'], write: ['POST', '/platform-credentials', {}] },
  'inference-models': { reads: ['/inference-models', '/inference-model-pools', '/inference-tokenizer-profiles'], write: ['POST', '/inference-models', {}] },
  search: { reads: ['/search-providers', '/search-settings'], write: ['POST', '/search-settings', {}] },
  'payments-processor': { reads: ['/stripe/customers'], write: ['POST', '/stripe/customers', {}] },
  referrals: { reads: ['/referrals'], write: ['POST', '/referrals', {}] },
  'capability-policies': { reads: ['/capability-policies', '/capability-policies/switches'], write: ['PUT', '/capability-policies/switches/transcription', {}] },
  users: { reads: ['/users'], write: ['POST', '/users', {}] },
  'audit-logs': { reads: ['/audit-logs'], write: ['DELETE', '/audit-logs/00000000-0000-4000-8000-000000000000', undefined] },
  'scheduler-endpoints': { reads: ['/scheduler-endpoints'], write: ['POST', '/scheduler-endpoints', {}] },
  'invite-codes': { reads: ['/invite-codes'], write: ['POST', '/invite-codes', { max_uses: 0 }] },
  billing: { reads: ['/billing/wallets', '/billing/reservations', '/billing/records'], write: ['POST', '/billing/records', {}] },
};

const FORBIDDEN: Array<[string, string, unknown]> = [
  ['GET', '/platform-keys', undefined],
  ['POST', '/platform-keys', { scopes: ['stats:read'] }],
  ['GET', '/platform-keys/00000000-0000-4000-8000-000000000000', undefined],
  ['DELETE', '/platform-keys/00000000-0000-4000-8000-000000000000', undefined],
  ['POST', '/users/00000000-0000-4000-8000-000000000000/impersonate', {}],
  ['PUT', '/users/00000000-0000-4000-8000-000000000000/platform-admin', { is_platform_admin: true }],
];

function expectDenied(r: Reply, status: number, code: string) {
  expect(r.status, r.text).to.equal(status);
  expect(r.body.error.code).to.equal(code);
  expect(r.headers.get('x-service-request-id')).to.match(/^req_/);
}

describe('management API: scopes per family', () => {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  const keys: Record<string, string> = {};
  before(async () => {
    admin = await startAdmin();
    for (const f of FAMILIES) {
      keys[`${f}:read`] = (await buildPlatformKey([`${f}:read`])).key;
      keys[`${f}:write`] = (await buildPlatformKey([`${f}:write`])).key;
    }
  });
  after(() => admin.close());
  const v1 = (p: string) => `/admin/v1${p}`;

  for (const family of FAMILIES) {
    const probe = PROBES[family];
    it(`${family}: read scope reads, cannot write; write scope does both; other scopes neither`, async () => {
      const other = family === 'stats' ? 'plans:write' : 'stats:write';
      for (const path of probe.reads) {
        expect((await adminCall(admin.url, keys[`${family}:read`], 'GET', v1(path))).status, path).to.equal(200);
        expect((await adminCall(admin.url, keys[`${family}:write`], 'GET', v1(path))).status, path).to.equal(200);
        const denied = await adminCall(admin.url, keys[other], 'GET', v1(path));
        expectDenied(denied, 403, 'insufficient_scope');
        // RFC 6750 §3.1: the challenge names the error and the scope that would serve the request
        expect(denied.headers.get('www-authenticate')).to.equal(`Bearer error="insufficient_scope", scope="${family}:read"`);
      }
      const head = await fetch(`${admin.url}${v1(probe.reads[0])}`, { method: 'HEAD', headers: { authorization: `Bearer ${keys[`${family}:read`]}` } });
      expect(head.status).to.equal(200);
      const [method, path, body] = probe.write;
      const readOnly = await adminCall(admin.url, keys[`${family}:read`], method, v1(path), body);
      expectDenied(readOnly, 403, 'insufficient_scope');
      expect(readOnly.headers.get('www-authenticate')).to.equal(`Bearer error="insufficient_scope", scope="${family}:write"`);
      expectDenied(await adminCall(admin.url, keys[other], method, v1(path), body), 403, 'insufficient_scope');
      const allowed = await adminCall(admin.url, keys[`${family}:write`], method, v1(path), body);
      // past authorization, refused on its merits: read-only paths answer 405, empty bodies 400
      const merits = family === 'stats' || family === 'audit-logs' ? [405, 'method_not_allowed'] : [400, 'invalid_request'];
      expect(allowed.status, allowed.text).to.equal(merits[0]);
      expect(allowed.body.error.code).to.equal(merits[1]);
    });
  }

  it('refuses the platform-admin paths to a management key holding every scope', async () => {
    const all = (await buildPlatformKey(ALL_SCOPES)).key;
    for (const [method, path, body] of FORBIDDEN) expectDenied(await adminCall(admin.url, all, method, v1(path), body), 403, 'platform_key_forbidden');
  });

  it("opens the platform-admin paths to a platform admin's own token only", async () => {
    const { token } = await buildAdminToken();
    expect((await adminCall(admin.url, token, 'GET', v1('/platform-keys'))).status).to.equal(200);
    for (const [method, path, body] of FORBIDDEN) {
      const r = await adminCall(admin.url, null, method, v1(path), body);
      expectDenied(r, 401, 'invalid_admin_token');
      expect(r.headers.get('www-authenticate'), 'no credential: the bare challenge (RFC 6750 §3.1)').to.equal('Bearer');
    }
    const wrongKind = await adminCall(admin.url, token, 'GET', v1('/organizations'));
    expectDenied(wrongKind, 401, 'invalid_platform_key');
    expect(wrongKind.headers.get('www-authenticate'), 'a refused credential: RFC 6750 invalid_token').to.equal('Bearer error="invalid_token"');
  });

  it('answers 401 for a missing, malformed or unknown key and 404 for a path of no family', async () => {
    expectDenied(await adminCall(admin.url, null, 'GET', v1('/organizations')), 401, 'invalid_platform_key');
    expectDenied(await adminCall(admin.url, 'svc_platform_short', 'GET', v1('/organizations')), 401, 'invalid_platform_key');
    const unknown = await adminCall(admin.url, `svc_platform_${'x'.repeat(40)}`, 'GET', v1('/organizations'));
    expectDenied(unknown, 401, 'invalid_platform_key');
    expect(unknown.headers.get('www-authenticate'), 'RFC 6750 §3.1').to.equal('Bearer error="invalid_token"');
    expectDenied(await adminCall(admin.url, keys['stats:read'], 'GET', v1('/no-such-family')), 404, 'not_found');
    expectDenied(await adminCall(admin.url, keys['plans:read'], 'GET', v1('/plans/00000000-0000-4000-8000-000000000000')), 404, 'not_found');
  });
});
