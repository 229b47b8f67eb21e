import fc from 'fast-check';
import { expect } from 'chai';
import { adminCall, bearer, buildAdminToken, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { rawRequest } from '../../helpers/raw-http';
import { FUZZ_PARAMS, fuzzTimeout, encodedBodies, jsonBodies, nastyString, problemOf } from '../../helpers/fuzz';
import { AuditLog } from '../../../shared/db/models';
import { waitFor } from '../../helpers/wait';
import { Op } from 'sequelize';

/** Writes that would change what the rest of the run relies on (switches, platform admins): fuzzed read-only. */
const KEEP_READ_ONLY = [/^\/capability-policies\/switches/, /^\/platform-keys/, /^\/users\/\{id\}\/platform-admin/];

describe('fuzzing the management API through the running admin app (fast-check)', function () {
  this.timeout(fuzzTimeout(120_000));
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  let routes: Array<{ method: string; path: string; family: string | null; body: unknown }> = [];
  let mgmt: string;
  let token: string;
  const findings: string[] = [];
  const writes = new Map<string, string>(); // request id → what was sent

  before(async () => {
    admin = await startAdmin();
    const doc = (await adminCall(admin.url, null, 'GET', '/admin/v1/openapi.json')).body;
    for (const [p, ops] of Object.entries<Record<string, { 'x-scope': string | null; requestBody?: { content: { 'application/json': { schema: { properties?: Record<string, unknown> } } } } }>>(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const path = p.replace(/^\/admin\/v1/, '');
        if (method !== 'get' && KEEP_READ_ONLY.some((re) => re.test(path))) continue;
        // A body shaped like the documented one (each property a string) for the mutations to start from.
        const props = op.requestBody?.content['application/json'].schema.properties ?? {};
        routes.push({ method: method.toUpperCase(), path, family: op['x-scope'], body: Object.fromEntries(Object.keys(props).map((k) => [k, 'x'])) });
      }
    }
    mgmt = (await buildPlatformKey()).key;
    token = (await buildAdminToken()).token;
  });
  after(() => admin.close());

  it('every documented route with fuzzed ids, query strings and bodies: no 5xx, always the JSON envelope', async () => {
    const id = fc.oneof(fc.uuid(), nastyString.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ''))).filter((s) => s.length > 0), fc.constantFrom('..', '%2F', '%00', '00000000-0000-4000-8000-000000000000', 'null', '-1'));
    const query = fc.oneof(fc.constant(''), fc.constantFrom('?limit=-1', '?limit=1e9', '?offset=x', '?limit=0&offset=-5', '?a=%', '?state=revoked&state=active', '?group_by=__proto__', '?from=never&to=0', '?from=0000-01-01', '?to=0000-12-31T10:00:00Z', '?from=%2B010000-01-01T00:00:00Z', '?user_id=x'));
    const arb = fc.tuple(fc.constantFrom(...routes), id, query).chain(([route, i, q]) =>
      fc.tuple(fc.constant(route), fc.constant(route.path.replace(/\{\w+\}/g, i) + q), jsonBodies(route.body)),
    );
    await fc.assert(
      fc.asyncProperty(arb, async ([route, path, body]) => {
        const secret = route.family === null ? token : mgmt;
        const hasBody = route.method !== 'GET' && route.method !== 'DELETE';
        const r = await rawRequest(admin.url, route.method, `/admin/v1${path}`, { headers: { ...bearer(secret), 'content-type': 'application/json' }, body: hasBody ? body : undefined });
        const problem = problemOf(r, route.method);
        if (problem) findings.push(`${route.method} ${path} body=${JSON.stringify(body.slice(0, 300))} → ${r.status}: ${problem} ${r.text.slice(0, 300)}`);
        // Audited: every write the guard let through (`/x/..` is a path of no family to the guard: 404 before auditing).
        if (route.method !== 'GET' && !/\/\.\.?(\/|\?|$)/.test(path)) writes.set(String(r.headers['x-service-request-id']), `${route.method} ${path} ${body.slice(0, 200)} → ${r.status}`);
        return r.status < 500;
      }),
      FUZZ_PARAMS(300),
    );
    expect(findings, findings.slice(0, 15).join('\n')).to.deep.equal([]);
  });

  it('bodies under gzip / deflate / br (whole, truncated, corrupted), garbage and unknown codings: no 5xx, the JSON envelope', async () => {
    const writesWithBody = routes.filter((r) => r.method === 'POST' || r.method === 'PUT' || r.method === 'PATCH');
    const arb = fc.constantFrom(...writesWithBody).chain((route) => fc.tuple(fc.constant(route), encodedBodies(route.body)));
    await fc.assert(
      fc.asyncProperty(arb, async ([route, { body, encoding }]) => {
        const path = route.path.replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000000');
        const secret = route.family === null ? token : mgmt;
        const r = await rawRequest(admin.url, route.method, `/admin/v1${path}`, { headers: { ...bearer(secret), 'content-type': 'application/json', 'content-encoding': encoding }, body });
        const problem = problemOf(r, route.method);
        if (problem) findings.push(`${route.method} ${path} content-encoding=${encoding} → ${r.status}: ${problem} ${r.text.slice(0, 300)}`);
        return r.status < 500;
      }),
      FUZZ_PARAMS(150),
    );
    expect(findings, findings.slice(0, 15).join('\n')).to.deep.equal([]);
  });

  it('random methods and path spellings: a JSON 401/403/404/405, never a 5xx', async () => {
    const seg = fc.oneof(fc.constantFrom(...routes.map((r) => r.path.split('/')[1])), nastyString.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ''))));
    const path = fc.array(seg, { minLength: 0, maxLength: 4 }).map((s) => `/admin/v1/${s.join('/')}`);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE'), path, fc.constantFrom(mgmt, token, 'svc_platform_x', ''), async (method, p, secret) => {
        const r = await rawRequest(admin.url, method, p, { headers: secret ? bearer(secret) : {} });
        const problem = problemOf(r, method);
        if (problem) findings.push(`${method} ${p} → ${r.status}: ${problem} ${r.text.slice(0, 200)}`);
        return r.status < 500;
      }),
      FUZZ_PARAMS(200),
    );
    expect(findings, findings.slice(0, 15).join('\n')).to.deep.equal([]);
  });

  it('every fuzzed write left its audit row', async () => {
    const ids = [...writes.keys()].filter((w) => w.startsWith('req_'));
    expect(ids.length).to.be.greaterThan(50);
    const audited = async () => new Set((await AuditLog.findAll({ attributes: ['requestId'], where: { requestId: { [Op.in]: ids } } })).map((a) => a.requestId));
    await waitFor(async () => (await audited()).size === ids.length, 3000, 100); // written once each answer is sent
    const got = await audited();
    const missing = ids.filter((i) => !got.has(i)).map((i) => writes.get(i));
    expect(missing).to.deep.equal([]);
  });
});
