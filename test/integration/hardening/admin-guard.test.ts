import { expect } from 'chai';
import { adminCall, bearer, buildAdminToken, buildPlatformAdmin, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { buildOrg } from '../../helpers/factories';
import { env } from '../../helpers/harness';
import { rawRequest, type RawReply } from '../../helpers/raw-http';
import { waitFor } from '../../helpers/wait';
import { AuditLog, User } from '../../../shared/db/models';
import { FAMILIES, canonicalPath, isPlatformAdminPath, familyOf } from '../../../shared/platform/families';

const ID = '00000000-0000-4000-8000-000000000000';
type Cred = 'none' | 'inference' | 'scoped' | 'unscoped' | 'admin';
const CREDS: Cred[] = ['none', 'inference', 'scoped', 'unscoped', 'admin'];

interface Route {
  method: string;
  path: string; // concrete, relative to /admin/v1
  family: string | null;
}

/** Spellings of one path that must not reach a handler, each different from the path itself. */
function variants(path: string): string[] {
  const segs = path.split('/').slice(1);
  const lastLiteral = segs.map((s, i) => (s === ID ? -1 : i)).filter((i) => i >= 0).pop()!;
  const withSeg = (i: number, f: (s: string) => string) => `/${segs.map((s, j) => (j === i ? f(s) : s)).join('/')}`;
  const out = [
    path.toUpperCase(),
    withSeg(lastLiteral, (s) => s.toUpperCase()),
    withSeg(0, (s) => s[0].toUpperCase() + s.slice(1)),
    `${path}/`,
    `/${path}`,
    path.replace(/\/([^/]*)$/, '//$1'),
    withSeg(lastLiteral, (s) => `%${s.charCodeAt(0).toString(16)}${s.slice(1)}`),
    withSeg(lastLiteral, (s) => `%${s.charCodeAt(0).toString(16).toUpperCase()}${s.slice(1).toUpperCase()}`),
    `${withSeg(lastLiteral, (s) => s.toUpperCase())}/`,
    path.replace(/\/([^/]*)$/, '/./$1'),
  ];
  return [...new Set(out)].filter((v) => v !== path);
}

/** What the guard must decide for a credential on a route of this family: a refusal, or 'pass'. */
function expected(family: string | null, cred: Cred): { status: number; code: string } | 'pass' {
  if (cred === 'none' || cred === 'inference') return { status: 401, code: family ? 'invalid_platform_key' : 'invalid_admin_token' };
  if (family === null) return cred === 'admin' ? 'pass' : { status: 403, code: 'platform_key_forbidden' };
  if (cred === 'admin') return { status: 401, code: 'invalid_platform_key' };
  return cred === 'scoped' ? 'pass' : { status: 403, code: 'insufficient_scope' };
}

const noRoute = (r: RawReply): boolean => r.status === 404 && /^No route for/.test(r.body?.error?.message ?? '');

describe('admin guard: every route and spelling, every credential kind', function () {
  this.timeout(180_000);
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  let routes: Route[] = [];
  const secrets: Partial<Record<Cred, (family: string | null) => string>> = {};

  before(async () => {
    admin = await startAdmin();
    const doc = (await adminCall(admin.url, null, 'GET', '/admin/v1/openapi.json')).body;
    for (const [p, ops] of Object.entries<Record<string, { 'x-scope': string | null }>>(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        routes.push({ method: method.toUpperCase(), path: p.replace(/^\/admin\/v1/, '').replace(/\{\w+\}/g, ID), family: op['x-scope'] });
      }
    }
    const inference = (await buildOrg(env().redis)).key;
    const token = (await buildAdminToken()).token;
    const perFamily: Record<string, { scoped: string; unscoped: string }> = {};
    for (const f of FAMILIES) {
      const others = FAMILIES.filter((g) => g !== f).map((g) => `${g}:write`);
      perFamily[f] = { scoped: (await buildPlatformKey([`${f}:write`])).key, unscoped: (await buildPlatformKey(others)).key };
    }
    const everything = (await buildPlatformKey()).key;
    secrets.inference = () => inference;
    secrets.admin = () => token;
    secrets.scoped = (f) => (f ? perFamily[f].scoped : everything);
    secrets.unscoped = (f) => (f ? perFamily[f].unscoped : perFamily.users.scoped);
  });
  after(() => admin.close());

  it('the OpenAPI document lists the routes of every family and the platform-admin paths', () => {
    const families = new Set(routes.map((r) => r.family));
    for (const f of FAMILIES) expect(families.has(f), f).to.equal(true);
    expect(families.has(null)).to.equal(true);
    for (const r of routes) {
      expect(isPlatformAdminPath(r.path), r.path).to.equal(r.family === null);
      if (r.family) expect(familyOf(r.path), r.path).to.equal(r.family);
    }
  });

  it("the decision for each spelling matches its route family, and no other spelling reaches another family's handler", async () => {
    const cases: Array<{ route: Route; path: string; cred: Cred; exact: boolean }> = [];
    for (const route of routes) {
      for (const cred of CREDS) {
        cases.push({ route, path: route.path, cred, exact: true });
        for (const v of variants(route.path)) cases.push({ route, path: v, cred, exact: false });
      }
    }
    const failures: string[] = [];
    let n = 0;
    const check = async ({ route, path, cred, exact }: (typeof cases)[number]) => {
      // An address per request: these failed credentials are not a guesser to rate-limit (auth-failures.test.ts).
      n++;
      const headers: Record<string, string> = { 'content-type': 'application/json', 'x-forwarded-for': `198.18.${n >> 8}.${n & 255}` };
      const secret = secrets[cred]?.(route.family);
      if (secret) Object.assign(headers, bearer(secret));
      const body = route.method === 'GET' || route.method === 'DELETE' ? undefined : '{"__guard_probe":true}';
      const r = await rawRequest(admin.url, route.method, `/admin/v1${path}`, { headers, body });
      const want = expected(route.family, cred);
      const label = `${route.method} ${path} as ${cred} → ${r.status} ${r.body?.error?.code ?? ''}`;
      if (r.status >= 500 && r.status !== 501) return void failures.push(`${label}: a 5xx`); // 501: impersonation is reserved
      if (r.status >= 400 && typeof r.body?.error?.code !== 'string') return void failures.push(`${label}: no JSON envelope`);
      if (want !== 'pass') {
        if (r.status !== want.status || r.body?.error?.code !== want.code) failures.push(`${label}: want ${want.status} ${want.code}`);
      } else if (exact ? r.status === 401 || r.status === 403 || noRoute(r) : r.status !== 404) {
        // Another spelling may only match a parameter of the same family's route (`/capability-policies/SWITCHES`).
        failures.push(`${label}: want ${exact ? 'the handler' : 'a 404'}`);
      }
    };
    for (let i = 0; i < cases.length; i += 16) await Promise.all(cases.slice(i, i + 16).map(check));
    expect(cases.length).to.be.greaterThan(1000);
    expect(failures, failures.slice(0, 20).join('\n')).to.deep.equal([]);
  });

  it('a management key with users:write cannot grant platform admin by changing the letter case', async () => {
    const user = await buildPlatformAdmin();
    await user.update({ isPlatformAdmin: false });
    const key = (await buildPlatformKey(['users:write'])).key;
    for (const p of ['PLATFORM-ADMIN', 'Platform-Admin', 'platform-admin/', '%70latform-admin']) {
      const r = await rawRequest(admin.url, 'PUT', `/admin/v1/users/${user.id}/${p}`, { headers: { ...bearer(key), 'content-type': 'application/json' }, body: '{"is_platform_admin":true}' });
      expect(r.status, p).to.equal(403);
      expect(r.body.error.code).to.equal('platform_key_forbidden');
    }
    expect((await User.findByPk(user.id))!.isPlatformAdmin).to.equal(false);
  });

  it('the audit log names the family the guard classified, whatever the spelling', async () => {
    const { token } = await buildAdminToken();
    const user = await buildPlatformAdmin();
    const path = `/admin/v1/users/${user.id}/Platform-Admin`;
    const r = await rawRequest(admin.url, 'PUT', path, { headers: { ...bearer(token), 'content-type': 'application/json' }, body: '{"is_platform_admin":false}' });
    expect(r.status).to.equal(404);
    const row = await waitFor(() => AuditLog.findOne({ where: { path } }));
    expect(row?.family).to.equal('platform-admin');
    expect((await User.findByPk(user.id))!.isPlatformAdmin).to.equal(true);
  });

  it('canonicalPath: decodes unreserved characters only, lowercases, drops empty segments', () => {
    expect(canonicalPath('//Users/%41b%2Fc/./PLATFORM-admin/')).to.equal('/users/ab%2fc/platform-admin');
    expect(canonicalPath('/a/./b/../c', false)).to.equal('/a/./b/../c');
    expect(isPlatformAdminPath('/stats/../platform-keys')).to.equal(true);
    expect(isPlatformAdminPath('/users/a%2Fb/platform-admin')).to.equal(true);
    expect(isPlatformAdminPath('/users/./platform-admin')).to.equal(true);
    expect(isPlatformAdminPath('/%50latform-keys')).to.equal(true);
  });
});
