import crypto from 'crypto';
import { expect } from 'chai';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { AuditLog, Provider, User } from '../../../shared/db/models';
import { waitFor } from '../../helpers/wait';

const rnd = () => crypto.randomBytes(4).toString('hex');

interface Fixtures {
  orgId: () => Promise<string>;
  providerId: string;
  userId: string;
}

/** One row per generic resource: a valid create body, an update, a filter, and bodies that must be refused. */
interface Case {
  path: string;
  object: string;
  create: (f: Fixtures) => Promise<Record<string, unknown>>;
  update: Record<string, unknown>;
  filter: string;
  invalid: Array<Record<string, unknown>>;
  /** Write-only fields whose values must never come back. */
  secrets?: string[];
}

const CASES: Case[] = [
  { path: '/organizations', object: 'organization', create: async () => ({ name: 'Acme', slug: `acme-${rnd()}`, lane_overrides: { 'chat:interactive': 3 } }), update: { entitlements: { background: true } }, filter: 'slug', invalid: [{ slug: 'no-name' }, { name: 'x', slug: 'Bad Slug' }, { name: 'x', slug: 'ok', lane_overrides: { chat: -1 } }] },
  { path: '/plans', object: 'plan', create: async () => ({ name: `plan-${rnd()}`, lane_limits: { 'chat:interactive': 2 } }), update: { entitlements: { background: false } }, filter: 'name', invalid: [{}, { name: 'p', lane_limits: { 'chat:interactive': 'two' } }] },
  { path: '/providers', object: 'provider', create: async () => ({ name: `prov-${rnd()}`, kind: 'openai', base_url: 'http://127.0.0.1:9/v1' }), update: { base_url: 'https://example.com/v1' }, filter: 'name', invalid: [{ name: 'p', kind: 'grpc', base_url: 'http://x' }, { name: 'p', kind: 'openai', base_url: 'ftp://x' }] },
  { path: '/platform-credentials', object: 'platform_credential', create: async (f) => ({ provider_id: (await Provider.create({ name: `pc-${rnd()}`, kind: 'openai', baseUrl: 'http://127.0.0.1:9', apiKeyEncrypted: null })).id, secret: `sk-secret-${rnd()}-value`, label: 'main' }), update: { secret: `sk-rotated-${rnd()}-value` }, filter: 'provider_id', invalid: [{ secret: 'x' }, { provider_id: 'not-a-uuid', secret: 'x' }], secrets: ['secret'] },
  { path: '/inference-models', object: 'inference_model', create: async (f) => ({ public_id: `m-${rnd()}`, provider_id: f.providerId, upstream_name: 'sim-chat', capabilities: { chat: true } }), update: { display_name: 'Renamed', prices: { input_token: 1, output_token: 2, web_search_call: 25_000, service_tiers: { priority: { input_token: 3, output_token: 5 }, flex: { input_token: 0.5, output_token: 1 } } } }, filter: 'public_id', invalid: [{ public_id: 'x', provider_id: '00000000-0000-4000-8000-000000000000', upstream_name: 'u', capabilities: { teleport: true } },
    // a tier's price names both token prices, for a tier OpenAI bills apart (flex, scale, priority), at no negative price
    ...[{ priority: { input_token: 3 } }, { turbo: { input_token: 1, output_token: 1 } }, { auto: { input_token: 1, output_token: 1 } }, { flex: { input_token: -1, output_token: 1 } }, { priority: 5 }].map((service_tiers) => ({ public_id: 'x', provider_id: '00000000-0000-4000-8000-000000000000', upstream_name: 'u', capabilities: { chat: true }, prices: { service_tiers } })), { public_id: 'x', upstream_name: 'u', capabilities: {} },
    // a price per web search call is a number, never negative (docs/catalog.md "OpenAI's web search models")
    ...[-1, 'many'].map((web_search_call) => ({ public_id: 'x', provider_id: '00000000-0000-4000-8000-000000000000', upstream_name: 'u', capabilities: { chat: true }, prices: { web_search_call } })), { public_id: 'x', provider_id: '00000000-0000-4000-8000-000000000000', upstream_name: 'u', capabilities: { chat: true }, limits: { image_tokens: 0 } }] },
  { path: '/inference-tokenizer-profiles', object: 'inference_tokenizer_profile', create: async () => ({ name: `tok-${rnd()}`, encoding: 'cl100k_base' }), update: { description: 'legacy' }, filter: 'name', invalid: [{ name: 't', encoding: 'llama' }] },
  { path: '/search-providers', object: 'search_provider', create: async () => ({ name: `sp-${rnd()}`, kind: 'brave', base_url: 'https://search.example.com', price_micros: 5000, api_key: `brv-secret-${rnd()}` }), update: { enabled: false }, filter: 'name', invalid: [{ name: 's', kind: 'brave', base_url: 'https://x', price_micros: -1 }, { name: 's', kind: 'google', base_url: 'https://x' }], secrets: ['api_key'] },
  { path: '/search-settings', object: 'search_setting', create: async (f) => ({ org_id: await f.orgId(), default_provider: 'brave', monthly_allowance: 100 }), update: { overage_enabled: true, overage_monthly_limit: 500 }, filter: 'org_id', invalid: [{ monthly_allowance: 1 }, { org_id: '00000000-0000-4000-8000-000000000000', monthly_allowance: -5 }] },
  { path: '/stripe/customers', object: 'payment_customer', create: async (f) => ({ org_id: await f.orgId(), customer_id: `cus_${rnd()}` }), update: { status: 'past_due' }, filter: 'customer_id', invalid: [{ org_id: '00000000-0000-4000-8000-000000000000' }, { customer_id: 'c', org_id: 'x' }] },
  { path: '/referrals', object: 'referral', create: async (f) => ({ code: `REF-${rnd()}`, referrer_user_id: f.userId, reward_micros: 1_000_000 }), update: { status: 'qualified' }, filter: 'code', invalid: [{ code: 'no spaces allowed' }, { code: 'abcd', status: 'paid' }] },
  { path: '/users', object: 'user', create: async () => ({ email: `u-${rnd()}@example.com`, name: 'U' }), update: { name: 'Renamed' }, filter: 'email', invalid: [{ email: 'not-an-email' }, { email: 'a@b.c', is_platform_admin: true }] },
  { path: '/scheduler-endpoints', object: 'scheduler_endpoint', create: async () => ({ queue: 'images-background', concurrency: 2 }), update: { priority_step: 10 }, filter: 'queue', invalid: [{ queue: 'gpu-queue' }] },
  { path: '/invite-codes', object: 'invite_code', create: async (f) => ({ org_id: await f.orgId(), max_uses: 5, expires_at: '2030-01-01T00:00:00.000Z' }), update: { disabled: true }, filter: 'org_id', invalid: [{ max_uses: 0 }, { expires_at: 'next tuesday' }, { expires_at: '0000-06-01T00:00:00Z' }] },
];

describe('management API: CRUD on every resource', () => {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  let key: string;
  let keyId: string;
  let f: Fixtures;
  before(async () => {
    admin = await startAdmin();
    ({ key, id: keyId } = await buildPlatformKey());
    const provider = await Provider.findOne({ where: { name: 'simulator' } });
    const user = await User.create({ email: `ref-${rnd()}@example.com`, name: null });
    f = { orgId: async () => (await buildOrg(env().redis)).org.id, providerId: provider!.id, userId: user.id };
  });
  after(() => admin.close());
  const req = (method: string, path: string, json?: unknown) => adminCall(admin.url, key, method, `/admin/v1${path}`, json);

  for (const c of CASES) {
    it(`${c.path}: create, get, list with filter, update, delete; invalid bodies refused; audited`, async () => {
      const before = (await req('GET', `${c.path}?limit=1`)).body.total;
      // JSON that is not an object ("text", 42, null, []) is an invalid request too, never a 500
      for (const bad of [...c.invalid, { ...(await c.create(f)), no_such_field: 1 }, 'text', 42, null, []]) {
        const r = await req('POST', c.path, bad);
        expect(r.status, `${JSON.stringify(bad)} → ${r.text}`).to.be.oneOf([400]);
        expect(r.body.error.code).to.be.oneOf(['invalid_request', 'invalid_reference']);
      }
      expect((await req('GET', `${c.path}?limit=1`)).body.total).to.equal(before);
      // the envelope names the field at fault
      expect((await req('POST', c.path, { ...(await c.create(f)), no_such_field: 1 })).body.error).to.include({ code: 'invalid_request', param: 'no_such_field' });
      expect((await req('GET', `${c.path}?bogus=1`)).body.error).to.include({ code: 'invalid_request', param: 'bogus' });
      expect((await call415(admin.url, key, c.path)).status).to.equal(415);

      const body = await c.create(f);
      const created = await req('POST', c.path, body);
      expect(created.status, created.text).to.equal(201);
      expect(created.body).to.include({ object: c.object });
      const id = created.body.id as string;
      for (const s of c.secrets ?? []) {
        expect(created.body).not.to.have.property(s);
        expect(created.text).not.to.include(String(body[s]));
      }

      const got = await req('GET', `${c.path}/${id}`);
      expect(got.status).to.equal(200);
      // the create answer may add what the create did besides the row (an invite code's `mail`)
      const { mail: _mail, ...row } = created.body;
      expect(got.body).to.deep.equal(row);

      const filterValue = created.body[c.filter];
      const listed = await req('GET', `${c.path}?${c.filter}=${encodeURIComponent(String(filterValue))}&limit=5`);
      expect(listed.status, listed.text).to.equal(200);
      expect(listed.body.data.map((x: { id: string }) => x.id)).to.include(id);
      expect((await req('GET', `${c.path}?limit=0`)).status).to.equal(400);
      expect((await req('GET', `${c.path}?bogus=1`)).status).to.equal(400);

      const updated = await req('PATCH', `${c.path}/${id}`, c.update);
      expect(updated.status, updated.text).to.equal(200);
      for (const [k, v] of Object.entries(c.update)) if (!(c.secrets ?? []).includes(k)) expect(updated.body[k]).to.deep.equal(v);
      for (const s of c.secrets ?? []) expect(updated.text).not.to.include(String(c.update[s]));
      expect((await req('PATCH', `${c.path}/${id}`, {})).status).to.equal(400);
      expect((await req('PATCH', `${c.path}/00000000-0000-4000-8000-000000000000`, c.update)).status).to.equal(404);
      expect((await req('GET', `${c.path}/not-a-uuid`)).status).to.equal(404);

      const deleted = await req('DELETE', `${c.path}/${id}`);
      expect(deleted.status).to.equal(200);
      expect(deleted.body).to.deep.equal({ id, object: c.object, deleted: true });
      const gone = await req('GET', `${c.path}/${id}`);
      expect(gone.status).to.equal(404);
      expect(gone.body.error.code).to.equal('not_found');

      // each request's audit row is written as it ends, not necessarily in the order the requests came
      const audited = ['DELETE success', 'PATCH success', 'POST success', 'PATCH failure'];
      const rowsOf = () => AuditLog.findAll({ where: { targetId: id, actorId: keyId } });
      const entries = await waitFor(async () => {
        const rows = await rowsOf();
        return audited.every((a) => rows.some((e) => `${e.method} ${e.outcome}` === a)) ? rows : null;
      });
      expect((entries ?? (await rowsOf())).map((e) => `${e.method} ${e.outcome}`)).to.include.members(audited);
      const all = JSON.stringify(await AuditLog.findAll({ where: { actorId: keyId } }));
      for (const s of c.secrets ?? []) expect(all).not.to.include(String(body[s]));
    });
  }

  it('answers 409 on a duplicate and on deleting a record still in use', async () => {
    const name = `dup-${rnd()}`;
    expect((await req('POST', '/plans', { name })).status).to.equal(201);
    const dup = await req('POST', '/plans', { name });
    expect(dup.status).to.equal(409);
    expect(dup.body.error.code).to.equal('already_exists');
    const provider = await Provider.findOne({ where: { name: 'simulator' } });
    const inUse = await req('DELETE', `/providers/${provider!.id}`);
    expect(inUse.status).to.equal(409);
    expect(inUse.body.error.code).to.equal('resource_in_use');
    const badRef = await req('POST', '/inference-models', { public_id: `m-${rnd()}`, provider_id: '00000000-0000-4000-8000-000000000000', upstream_name: 'u', capabilities: { chat: true } });
    expect(badRef.status).to.equal(400);
    expect(badRef.body.error.code).to.equal('invalid_reference');
  });

  it('paginates with limit and offset: the pages are disjoint and together list every row once', async () => {
    const created: string[] = [];
    for (let i = 0; i < 3; i++) created.push((await req('POST', '/inference-tokenizer-profiles', { name: `page-${rnd()}`, encoding: 'p50k_base' })).body.id);
    const ids = (r: { body: { data: Array<{ id: string }> } }) => r.body.data.map((x) => x.id);
    const first = await req('GET', '/inference-tokenizer-profiles?encoding=p50k_base&limit=2');
    expect(first.body.data).to.have.length(2);
    expect(first.body.has_more).to.equal(true);
    const second = await req('GET', '/inference-tokenizer-profiles?encoding=p50k_base&limit=2&offset=2');
    expect(second.body.data.length).to.be.greaterThan(0);
    expect(ids(second).filter((id) => ids(first).includes(id)), 'rows on both pages').to.deep.equal([]);
    // walking every page gives each row exactly once, ours included, and ends with has_more false
    const walked: string[] = [];
    for (let offset = 0, more = true; more; offset += 2) {
      const page = await req('GET', `/inference-tokenizer-profiles?encoding=p50k_base&limit=2&offset=${offset}`);
      expect(page.status, page.text).to.equal(200);
      walked.push(...ids(page));
      more = page.body.has_more;
      expect(offset, 'pagination ends').to.be.below(10_000);
    }
    expect(new Set(walked).size, 'no row twice').to.equal(walked.length);
    expect(walked).to.include.members(created);
    expect(walked.slice(0, 2)).to.deep.equal(ids(first));
  });
});

function call415(base: string, key: string, path: string) {
  return fetch(`${base}/admin/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain' }, body: 'x' });
}
