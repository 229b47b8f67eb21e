import zlib from 'zlib';
import fc from 'fast-check';
import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { rawRequest, type RawReply } from '../../helpers/raw-http';
import { FUZZ_PARAMS, fuzzTimeout, jsonBodies, nastyString, problemOf } from '../../helpers/fuzz';
import { buildWebMember, WebClient, WEB_PASSWORD } from '../../helpers/web-client';
import { stateChangingRoutes } from '../../helpers/routes';
import { searchOrg, type SearchOrg } from '../search/helpers';
import { dashboardRouter } from '../../../api/dashboard/router';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { buildPlatformAdmin, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { consoleRouter } from '../../../api/admin/console/router';
import { setPassword } from '../../../shared/web/passwords';
import type { User } from '../../../shared/db/models';

/**
 * Fuzzing the routes the other fuzz suites leave out: the hosted MCP server, the plain search route,
 * conversation items and response token counts, and the dashboard's forms and pages as a JSON client
 * (signed in, with the CSRF token, so the fields reach validation).
 */

/** A path segment a client could send: odd characters, encoded. */
const segment = fc.oneof(
  fc.uuid(),
  nastyString.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ''))).filter((s) => s.length > 0),
  fc.constantFrom('%00', '..', '%2e%2e', '%2F', '%252F', 'x'.repeat(3000), '00000000-0000-4000-8000-000000000000', '-1', '1e309', 'null', '%ZZ', '%'),
);

/** A form value: text, junk, or bytes that are not UTF-8, percent-encoded. */
const formValue = fc.oneof(
  nastyString.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ''))),
  fc.constantFrom('%FF%FE', '%C3%28', '%00', '%', '%ZZ', '1e309', '-1', 'NaN', 'Infinity', '0x10', '9'.repeat(400), '2027-02-31', ''),
  fc.constantFrom('2147483648', '9007199254740993', '99999999999', '1e15', '1e19', '92233720368547.76', '0.5', '0.0000001', '-0', '+1', '1_000', '9999-12-31', '0001-01-01', '0000-01-01', '0000-12-31T23%3A59', '-000001-01-01', '%2B010000-01-01', '275760-09-13', 'chat:interactive=2147483648', 'chat:interactive=1e3', 'chat:interactive=-1'),
);

describe('fuzzing MCP, search, conversation items and the dashboard through the running app (fast-check)', function () {
  this.timeout(fuzzTimeout(120_000));
  let o: SearchOrg;
  let other: TestOrg;
  const findings: string[] = [];

  async function send(method: string, path: string, headers: Record<string, string>, body?: string | Buffer, problem = problemOf, base = env().gw.url, localAddress?: string): Promise<RawReply> {
    const r = await rawRequest(base, method, path, { headers, body, localAddress });
    const wrong = problem(r, method) ?? (r.text.includes(o.key) ? 'the API key echoed' : /SequelizeDatabaseError|invalid input syntax|ValidationError: "|\bSELECT\b.+\bFROM\b/.test(r.text) ? 'internals leaked' : undefined);
    if (wrong) findings.push(`${method} ${path.slice(0, 200)} body=${JSON.stringify(String(body ?? '').slice(0, 300))} → ${r.status}: ${wrong} ${r.text.slice(0, 300)}`);
    return r;
  }

  beforeEach(() => {
    findings.length = 0;
  });

  /** MCP's Streamable HTTP answers in JSON-RPC, errors too (a 4xx with a JSON-RPC error, message by message in a batch). */
  const mcpProblem = (r: RawReply, method?: string) => {
    if (r.status >= 500) return `status ${r.status}`;
    // MCP's Streamable HTTP answers in JSON-RPC, errors too (a 4xx with a JSON-RPC error, message by message in a batch)
    const rpc = (m: { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown } }) => m?.jsonrpc === '2.0' && (m.error === undefined || (typeof m.error.code === 'number' && typeof m.error.message === 'string'));
    const messages = Array.isArray(r.body) ? r.body : [r.body];
    if (r.body && typeof r.body === 'object' && messages.every(rpc)) return /\n\s+at .+:\d+:\d+|node_modules\/|\/dist\/(api|shared)\//.test(r.text) ? 'a stack trace or source path leaked' : undefined;
    return problemOf(r, method);
  };

  // after every test, the nested suites' too: the gateway still serves
  after(async () => {
    const h = await rawRequest(env().gw.url, 'GET', '/healthz');
    expect(h.status, h.text).to.equal(200);
  });

  before(async () => {
    o = await searchOrg();
    other = await buildOrg(env().redis);
  });

  it('POST /mcp: malformed JSON-RPC messages and batches answer JSON-RPC errors or HTTP 4xx, never a 5xx', async () => {
    const templates = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } },
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'web_search', arguments: { query: 'q', count: 2 } } },
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'generate_image', arguments: { prompt: 'p', size: '256x256' } } },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3, reason: 'x' } },
      [{ jsonrpc: '2.0', id: 5, method: 'ping' }, { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'web_fetch', arguments: { url: 'https://example.com' } } }],
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...templates).chain((t) => jsonBodies(t)), fc.constantFrom('2025-03-26', '2025-06-18', 'bogus', ''), async (body, protocol) => {
        const headers: Record<string, string> = { authorization: `Bearer ${o.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
        if (protocol) headers['mcp-protocol-version'] = protocol;
        return (await send('POST', '/mcp', headers, body, mcpProblem)).status < 500;
      }),
      FUZZ_PARAMS(150),
    );
    expect(findings, findings.slice(0, 15).join('\n')).to.deep.equal([]);
  });

  it('/mcp with every method and fuzzed session, resumption, protocol and accept headers', async () => {
    const header = fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('', '0', '-1', '1e309', 'x'.repeat(5000), 'abc_123', '00000000-0000-4000-8000-000000000000', '../../x', 'null')).filter((h) => /^[\t\x20-\x7e]*$/.test(h));
    const headers = fc.record(
      { 'mcp-session-id': header, 'last-event-id': header, 'mcp-protocol-version': fc.oneof(header, fc.constantFrom('2025-03-26', '2025-06-18', '2024-11-05')), accept: fc.constantFrom('application/json', 'text/event-stream', 'application/json, text/event-stream', '*/*', ''), 'content-type': fc.constantFrom('application/json', 'text/plain', '') },
      { requiredKeys: [] },
    );
    const body = fc.constantFrom('{"jsonrpc":"2.0","id":1,"method":"ping"}', '{"jsonrpc":"2.0","id":1,"result":{}}', '{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}', '', '{}');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS', 'HEAD'), headers, body, async (method, h, b) => {
        const sent = Object.assign({ authorization: `Bearer ${o.key}` }, h);
        return (await send(method, '/mcp', sent, method === 'POST' || method === 'PUT' || method === 'PATCH' ? b : undefined, mcpProblem)).status < 500;
      }),
      FUZZ_PARAMS(150),
    );
    expect(findings, findings.slice(0, 15).join('\n')).to.deep.equal([]);
  });

  it('JSON routes no other suite fuzzes (search, conversation items, response token counts)', async () => {
    const conv = await send('POST', '/v1/conversations', { 'SERVICE-API-KEY': o.key, 'content-type': 'application/json' }, '{}');
    expect(conv.status, conv.text).to.equal(200);
    const stored = await send('POST', '/v1/chat/completions', { 'SERVICE-API-KEY': o.key, 'content-type': 'application/json' }, JSON.stringify({ model: 'sim-chat', store: true, max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] }));
    expect(stored.status, stored.text).to.equal(200);
    const routes: Array<[string, unknown]> = [
      ['/v1/alpha/search', { query: 'q', provider: 'brave', count: 3 }],
      [`/v1/conversations/${conv.body.id}/items`, { items: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }] }],
      [`/v1/conversations/${conv.body.id}`, { metadata: { a: 'b' } }],
      ['/v1/responses/input_tokens', { model: 'sim-chat', input: [{ role: 'user', content: 'hi' }], instructions: 'x' }],
      [`/v1/chat/completions/${stored.body.id}`, { metadata: { a: 'b' } }],
      ['/v1/images/edits', { model: 'sim-image', prompt: 'p', images: [{ image_url: 'data:image/png;base64,iVBORw0KGgo=' }, { file_id: 'img_x' }], image_ids: ['img_x'], size: '256x256', n: 1 }],
      ['/v1/audio/transcriptions', { model: 'sim-whisper', file: 'x' }],
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes).chain(([p, t]) => fc.tuple(fc.constant(p), jsonBodies(t))), async ([path, body]) =>
        (await send('POST', path, { 'SERVICE-API-KEY': o.key, 'content-type': 'application/json' }, body)).status < 500,
      ),
      FUZZ_PARAMS(200),
    );
    expect(findings, findings.slice(0, 15).join('\n')).to.deep.equal([]);
  });

  it('ids and queries of the stored-object routes: odd characters, other orgs\' ids, huge and negative numbers', async () => {
    const theirs = await send('POST', '/v1/conversations', { 'SERVICE-API-KEY': other.key, 'content-type': 'application/json' }, '{}');
    const id = fc.oneof(segment, fc.constant(String(theirs.body.id)), fc.constantFrom('conv_x', 'resp_x', 'msg_x', 'img_x', 'batch_x', 'file-x', 'msgbatch_x'));
    // duplicated names: the query parser gives the route an array where it expects a string
    const pair = fc.tuple(fc.constantFrom('limit', 'after', 'before', 'order', 'include', 'include[]', 'starting_after', 'after_id', 'before_id', 'purpose', 'metadata', 'model'), formValue).map(([k, v]) => `${k}=${v}`);
    const query = fc.oneof(fc.constant(''), fc.array(pair, { minLength: 1, maxLength: 4 }).map((q) => `?${q.join('&')}`), fc.constantFrom('?limit=1&limit=2', '?after=a&after=b', '?after[a]=1', '?order=asc&order=desc', '?include=__proto__', '?limit=', '?&&', '?=&=', '?limit=%'));
    const routes = ['/r/ID/v1/chat/completions', '/a/KEY/p/ID/v1/models', '/a/ID/v1/models', '/v1/conversations/ID', '/v1/conversations/ID/items', '/v1/conversations/ID/items/ID', '/v1/responses/ID', '/v1/responses/ID/input_items', '/v1/responses/ID/cancel', '/v1/chat/completions/ID', '/v1/chat/completions/ID/messages', '/v1/chat/completions', '/v1/images/ID', '/v1/images/ID/content', '/v1/models/ID', '/v1/files/ID/content', '/v1/batches/ID/cancel', '/v1/messages/batches/ID/results', '/v1/files', '/v1/batches', '/v1/messages/batches', '/v1/models', '/v1/conversations/ID/items', '/v1/embeddings/models', '/v1/images/models', '/v1/audio/transcriptions/models'];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('GET', 'POST', 'DELETE'), fc.constantFrom(...routes), id, id, query, async (method, route, a, b, q) => {
        let n = 0;
        const path = route.replace('KEY', o.key).replace(/ID/g, () => (n++ === 0 ? a : b)) + q;
        return (await send(method, path, { 'SERVICE-API-KEY': o.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, method === 'POST' ? '{}' : undefined)).status < 500;
      }),
      FUZZ_PARAMS(250),
    );
    expect(findings, findings.slice(0, 15).join('\n')).to.deep.equal([]);
  });

  /** A path parameter: the right one, one of another organization's or user's, or odd characters. */
  const param = (right: string, theirs: string[]) =>
    fc.oneof({ weight: 2, arbitrary: segment }, { weight: 2, arbitrary: fc.constant(right) }, { weight: 1, arbitrary: fc.constantFrom(...theirs) });

  const FIELDS = ['name', 'slug', 'org_wide', 'project', 'allowed_models', 'rpm', 'tpm', 'budget_usd', 'budget_period', 'expires_at', 'grace', 'enabled', 'monthly_limit', 'cap', 'provider', 'api_key', 'email', 'role', 'confirm', 'amount', 'period', 'from', 'to', 'plan_id', 'lane_overrides', 'back', 'scopes', 'engaged', 'org', 'org_id', 'password', 'once'];
  /** A form field: a known name or a bracketed / prototype one, with a fuzzed value (the names repeat: duplicates). */
  const field = fc
    .tuple(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...FIELDS) }, { weight: 1, arbitrary: fc.constantFrom('name[]', 'name[a]', 'rpm[0]', 'scopes[]', '__proto__', '__proto__[x]', 'constructor[prototype]', '') }), formValue)
    .map(([k, v]) => `${encodeURIComponent(k).replace(/%5B/g, '[').replace(/%5D/g, ']')}=${v}`);
  /** The fields of one form: fuzzed ones, and sometimes a well-formed one-time token that earlier runs sent too (a form sent again). */
  const formFields = fc.tuple(fc.array(field, { maxLength: 8 }), fc.boolean()).map(([fields, again]) => (again ? [...fields, `_once=${'B'.repeat(22)}`] : fields));

  /** How a form body is framed: mostly as a browser sends it, else another type or charset, or compressed (whole or cut). */
  const framing = fc.oneof(
    { weight: 6, arbitrary: fc.constant({ type: 'application/x-www-form-urlencoded', encoding: '' }) },
    { weight: 1, arbitrary: fc.record({ type: fc.constantFrom('application/x-www-form-urlencoded; charset=latin1', 'application/x-www-form-urlencoded; charset=utf-16', 'application/json', 'multipart/form-data; boundary=x', 'text/plain', ''), encoding: fc.constantFrom('', 'gzip', 'deflate', 'br', 'bogus') }) },
  );

  /** Posts fuzzed forms (with the session's CSRF token) to every route, its parameters drawn by `params`. */
  async function fuzzForms(web: WebClient, base: string, routes: string[], params: (name: string) => fc.Arbitrary<string>, runs = 250, localAddress?: string): Promise<void> {
    const arb = fc.constantFrom(...routes).chain((route) => {
      const names = [...route.matchAll(/:(\w+)/g)].map((m) => m[1]);
      return fc.tuple(fc.constant(route), fc.tuple(...names.map(params)), formFields, framing);
    });
    await fc.assert(
      fc.asyncProperty(arb, async ([route, values, fields, frame]) => {
        let i = 0;
        const path = route.split(' ')[1].replace(/:(\w+)/g, () => values[i++]);
        const form = Buffer.from([`_csrf=${encodeURIComponent(web.csrf)}`, ...fields].join('&'));
        const body = frame.encoding === 'gzip' ? zlib.gzipSync(form) : frame.encoding === 'deflate' ? zlib.deflateSync(form).subarray(0, 5) : form;
        const headers: Record<string, string> = { cookie: web.cookie, accept: 'application/json', 'content-type': frame.type };
        if (frame.encoding) headers['content-encoding'] = frame.encoding;
        return (await send('POST', path, headers, body, problemOf, base, localAddress)).status < 500;
      }),
      FUZZ_PARAMS(runs),
    );
    expect(findings, findings.slice(0, 15).join('\n')).to.deep.equal([]);
  }

  describe('the dashboard as a signed-in owner asking for JSON', () => {
    let web: WebClient;
    let owner: User;
    let member: User;
    let base: string;
    before(async () => {
      owner = await buildWebMember(o.org.id, 'owner');
      member = await buildWebMember(o.org.id, 'member');
      web = new WebClient(env().gw.url);
      expect((await web.signIn('/dashboard/sign-in', owner.email, WEB_PASSWORD)).status).to.equal(303);
      expect((await web.get(`/dashboard/o/${o.org.slug}/keys`)).status).to.equal(200);
      base = `/dashboard/o/${o.org.slug}`;
    });

    const dash = (method: string, path: string, body?: string) =>
      send(method, path, { cookie: web.cookie, accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) }, body);

    it('every form with fuzzed fields (duplicates, brackets, non-UTF-8, huge and odd numbers) and path ids: a JSON 4xx or a redirect, never a 5xx', async () => {
      // Sign-in and sign-out would end the session; a password link and an invitation code are fuzzed below.
      const routes = stateChangingRoutes(dashboardRouter({ redis: env().redis, directory: env().gw.ctx.directory }), '/dashboard').filter((r) => r.includes('/o/:org'));
      expect(routes.length).to.be.greaterThan(8);
      const own: Record<string, string> = { org: o.org.slug, userId: member.id, provider: 'brave', id: o.keyId };
      const theirs = [other.keyId, other.project.id, other.org.slug, o.project.id, owner.id];
      await fuzzForms(web, env().gw.url, routes, (name) => (name === 'org' ? fc.constant(o.org.slug) : param(own[name], theirs)));
    });

    it('pages with fuzzed queries and ids: a JSON 4xx or the page, never a 5xx', async () => {
      const pages = ['', '/models', '/activity', '/activity.csv', '/activity/ID', '/keys', '/projects', '/members', '/search'];
      const query = fc.array(fc.tuple(fc.constantFrom('from', 'to', 'key', 'project', 'model', 'status', 'cursor', 'from[]', 'key[a]', 'page'), formValue).map(([k, v]) => `${k}=${v}`), { maxLength: 4 }).map((q) => (q.length ? `?${q.join('&')}` : ''));
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...pages), segment, query, async (page, id, q) => (await dash('GET', `${base}${page.replace('ID', id)}${q}`)).status < 500),
        FUZZ_PARAMS(200),
      );
      expect(findings, findings.slice(0, 15).join('\n')).to.deep.equal([]);
    });
  });

  describe('the console as a signed-in operator asking for JSON', () => {
    let admin: Awaited<ReturnType<typeof startAdmin>>;
    let web: WebClient;
    let victim: User;
    let platformKeyId: string;
    before(async () => {
      admin = await startAdmin();
      const operator = await buildPlatformAdmin();
      await setPassword(operator, WEB_PASSWORD);
      victim = await buildWebMember(other.org.id, 'member');
      platformKeyId = (await buildPlatformKey(['stats:read'])).id;
      web = new WebClient(admin.url);
      expect((await web.signIn('/sign-in', operator.email, WEB_PASSWORD)).status).to.equal(303);
      expect((await web.get('/create')).status).to.equal(200);
    });
    after(() => admin.close());

    it('every form with fuzzed fields and path ids: a JSON 4xx or a redirect, never a 5xx', async () => {
      // Sign-in and sign-out end the session; the kill switches are global (the management fuzz keeps them read-only too).
      const routes = stateChangingRoutes(consoleRouter(env().redis)).filter((r) => !/sign-(in|out)|\/switches\//.test(r));
      expect(routes).to.include.members(['POST /orgs/:id/plan', 'POST /orgs/:id/lanes', 'POST /keys', 'POST /users/:id/:action', 'POST /create/org']);
      const right = (name: string, route: string) => (name === 'action' ? fc.constantFrom('promote', 'demote', 'delete', 'impersonate', 'x') : param(route.startsWith('POST /keys') ? platformKeyId : route.startsWith('POST /users') ? victim.id : other.org.id, [o.org.id, o.keyId, victim.id]));
      for (const route of routes) await fuzzForms(web, admin.url, [route], (name) => right(name, route), 80);
    });

    it('pages with fuzzed queries and ids: a JSON 4xx or the page, never a 5xx', async () => {
      const pages = ['/', '/orgs/ID', '/orgs/ID/activity', '/orgs/ID/activity.csv', '/orgs/ID/activity/ID', '/keys', '/users', '/audit', '/pools', '/switches', '/create', '/impersonate'];
      const query = fc.array(fc.tuple(fc.constantFrom('from', 'to', 'key', 'project', 'model', 'status', 'cursor', 'q', 'page', 'org', 'user', 'action', 'before', 'limit'), formValue).map(([k, v]) => `${k}=${v}`), { maxLength: 4 }).map((q) => (q.length ? `?${q.join('&')}` : ''));
      const id = fc.oneof(segment, fc.constant(other.org.id), fc.constant(other.org.slug));
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...pages), id, query, async (page, i, q) => (await send('GET', `${page.replace(/ID/g, i)}${q}`, { cookie: web.cookie, accept: 'application/json' }, undefined, problemOf, admin.url)).status < 500),
        FUZZ_PARAMS(150),
      );
      expect(findings, findings.slice(0, 15).join('\n')).to.deep.equal([]);
    });
  });

  it('the token forms of the dashboard (password links, invitations) with odd tokens and fields', async () => {
    const web = new WebClient(env().gw.url);
    expect((await web.get('/dashboard/sign-in')).status).to.equal(200);
    await fuzzForms(web, env().gw.url, ['POST /dashboard/password/:token', 'POST /dashboard/invite/:code'], () => segment);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/dashboard/password/', '/dashboard/invite/'), segment, async (p, t) => (await send('GET', p + t, { accept: 'application/json' })).status < 500),
      FUZZ_PARAMS(60),
    );
    expect(findings, findings.slice(0, 15).join('\n')).to.deep.equal([]);
  });

  it('the sign-in form with fuzzed emails, passwords and framing: a JSON 4xx (401, then 429), never a 5xx', async () => {
    // from an address of its own: past its failed sign-in limit (a 429, as it should be) nobody else signs in from it
    const address = '127.0.0.31';
    const web = new WebClient(env().gw.url, address);
    expect((await web.get('/dashboard/sign-in')).status).to.equal(200);
    await fuzzForms(web, env().gw.url, ['POST /dashboard/sign-in'], () => segment, 60, address);
  });


});
