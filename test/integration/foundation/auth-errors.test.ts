import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { buildAdminToken, buildPlatformKey } from '../../helpers/admin';
import { createApiKey, createProject, revokeApiKey } from '../../../shared/tenancy/ops';
import { UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';
import { archiveProject } from '../../../shared/tenancy/projects';

const V = { 'anthropic-version': '2023-06-01' };
const msg = [{ role: 'user', content: 'auth error test' }];

/** Every inference POST of the chat-style dialects, with a body that would succeed with a good key. */
const ROUTES: Array<{ path: string; headers: Record<string, string>; json: unknown }> = [
  { path: '/v1/chat/completions', headers: {}, json: { model: 'sim-chat', messages: msg } },
  { path: '/v1/completions', headers: {}, json: { model: 'sim-chat', prompt: 'x' } },
  { path: '/v1/messages', headers: V, json: { model: 'sim-chat', max_tokens: 10, messages: msg } },
  { path: '/v1/messages/count_tokens', headers: V, json: { model: 'sim-chat', messages: msg } },
  { path: '/v1/responses', headers: {}, json: { model: 'sim-chat', input: 'x' } },
  { path: '/responses', headers: {}, json: { model: 'sim-chat', input: 'x' } },
];

/** RFC 6750 §3.1: a refused credential is `invalid_token`; a request that sent none gets the bare challenge. */
const INVALID_TOKEN = 'Bearer error="invalid_token"';

function expectInvalidKey(r: Reply, what: string, challenge = INVALID_TOKEN) {
  expect(r.status, `${what}: ${r.text}`).to.equal(401);
  // the plain envelope on every path, plus the dialect's fields on a dialect's path (`what` starts with it)
  const dialect = /\/v1\/messages/.test(what) ? { type: 'authentication_error' } : /^unknown path/.test(what) ? {} : { type: 'invalid_request_error', param: null }; // OpenAI's type for a wrong key (invalid_api_key)
  expect(r.body, what).to.deep.equal({ error: { code: 'INVALID_API_KEY', message: r.body.error.message, ...dialect } });
  expect(r.body.error.message, what).to.be.a('string').and.not.equal('');
  expect(r.headers.get('x-service-request-id'), what).to.match(/^req_[0-9a-f]{24}$/);
  expect(r.headers.get('www-authenticate'), `${what}: RFC 9110 §15.5.2 and RFC 6750 §3.1, as the admin API`).to.equal(challenge);
  expect(r.text, what).not.to.match(/at .*\.js:\d+/);
}

describe('authentication failures on inference requests: 401, nothing sent upstream, nothing billed', () => {
  beforeEach(resetSim);

  it('refuses missing, unknown, malformed, management, admin-token and provider-only credentials on every chat-style path', async () => {
    const platform = (await buildPlatformKey()).key;
    const { token } = await buildAdminToken();
    const credentials: Array<[string, Record<string, string>]> = [
      ['no key', {}],
      ['unknown SERVICE-API-KEY', keyHeader(`svc_${'z'.repeat(40)}`)],
      ['malformed SERVICE-API-KEY', keyHeader('svc_')],
      ['empty bearer', { authorization: 'Bearer ' }],
      ['management key as bearer', { authorization: `Bearer ${platform}` }],
      ['management key as x-api-key', { 'x-api-key': platform }],
      ['management key in SERVICE-API-KEY', keyHeader(platform)],
      ['admin token as bearer', { authorization: `Bearer ${token}` }],
      ['provider key only, as bearer (passthrough needs a gateway key)', { authorization: 'Bearer sk-own-provider-key' }],
      ['provider key only, as x-api-key', { 'x-api-key': 'sk-ant-own-provider-key' }],
    ];
    await usageSettled();
    const before = await UsageEvent.count();
    for (const route of ROUTES) {
      for (const [what, headers] of credentials) {
        const r = await call('POST', route.path, { headers: { ...route.headers, ...headers }, json: route.json });
        // no key and an empty bearer carry no credential: no error code (RFC 6750 §3.1)
        expectInvalidKey(r, `${route.path} with ${what}`, what === 'no key' || what === 'empty bearer' ? 'Bearer' : INVALID_TOKEN);
        expect(r.text, 'the presented secret is never echoed').not.to.include(platform).and.not.include(token);
      }
    }
    expect(env().sim.log.entries).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count()).to.equal(before);
  });

  it('refuses a revoked key on every chat-style path, in a header and in the path', async () => {
    const o = await buildOrg(env().redis);
    expect((await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: ROUTES[0].json })).status).to.equal(200);
    expect(await revokeApiKey(env().redis, o.keyId)).to.equal(true);
    resetSim();
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    for (const route of ROUTES) {
      expectInvalidKey(await call('POST', route.path, { headers: { ...route.headers, ...keyHeader(o.key) }, json: route.json }), `${route.path} revoked`);
      expectInvalidKey(await call('POST', route.path, { headers: { ...route.headers, authorization: `Bearer ${o.key}` }, json: route.json }), `${route.path} revoked bearer`);
      expectInvalidKey(await call('POST', `/a/${o.key}${route.path}`, { headers: route.headers, json: route.json }), `/a/…${route.path} revoked`);
    }
    expect(env().sim.log.entries).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
  });

  it('answers 401 before 404 for an unknown path without a valid key', async () => {
    expectInvalidKey(await call('GET', '/v1/no-such-route'), 'unknown path, no key', 'Bearer');
    expectInvalidKey(await call('POST', '/v1/no-such-route', { headers: keyHeader(`svc_${'q'.repeat(40)}`), json: {} }), 'unknown path, unknown key');
  });
});

describe('project attribution and routing plans: refused without billing', () => {
  let o: TestOrg;
  let bound: string;
  let otherProjectSlug: string;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    const other = await createProject(env().redis, o.org.id, 'Other', `other-${Date.now()}`);
    otherProjectSlug = other.slug;
    bound = (await createApiKey(env().redis, { orgId: o.org.id, projectId: o.project.id })).key;
  });

  it('403 project_mismatch when a project-bound key names another project (header or path); its own project is fine', async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    const viaHeader = await call('POST', '/v1/chat/completions', { headers: { ...keyHeader(bound), 'SERVICE-PROJECT-ID': otherProjectSlug }, json: ROUTES[0].json });
    expect(viaHeader.status, viaHeader.text).to.equal(403);
    expect(viaHeader.body.error.code).to.equal('project_mismatch');
    const viaPath = await call('POST', `/a/${bound}/p/${otherProjectSlug}/v1/chat/completions`, { json: ROUTES[0].json });
    expect(viaPath.status, viaPath.text).to.equal(403);
    expect(viaPath.body.error.code).to.equal('project_mismatch');
    expect(viaPath.headers.get('deprecation')).to.equal('true');
    const messages = await call('POST', '/v1/messages', { headers: { ...keyHeader(bound), ...V, 'SERVICE-PROJECT-ID': otherProjectSlug }, json: ROUTES[2].json });
    expect(messages.status).to.equal(403);
    expect(messages.body).to.deep.equal({ error: { code: 'project_mismatch', message: messages.body.error.message, type: 'permission_error' } });
    expect(env().sim.log.entries).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);

    const own = await call('POST', '/v1/chat/completions', { headers: { ...keyHeader(bound), 'SERVICE-PROJECT-ID': 'proj' }, json: ROUTES[0].json });
    expect(own.status, own.text).to.equal(200);
    await usageSettled();
    const [ev] = await UsageEvent.findAll({ where: { requestId: own.headers.get('x-service-request-id')! } });
    expect(ev.projectId).to.equal(o.project.id);
  });

  it('400 invalid_project for unknown project ids and slugs, including uuid-shaped junk', async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    for (const project of ['missing', '00000000-0000-4000-8000-000000000000', '-'.repeat(36), 'ffffffff-ffff-ffff-ffff-ffffffffffff-']) {
      const r = await call('POST', '/v1/chat/completions', { headers: { ...keyHeader(o.key), 'SERVICE-PROJECT-ID': project }, json: ROUTES[0].json });
      expect(r.status, `${project}: ${r.text}`).to.equal(400);
      expect(r.body.error.code).to.equal('invalid_project');
    }
    const inPath = await call('POST', `/a/${o.key}/p/${'-'.repeat(36)}/v1/chat/completions`, { json: ROUTES[0].json });
    expect(inPath.status, inPath.text).to.equal(400);
    expect(inPath.body.error.code).to.equal('invalid_project');
    expect(env().sim.log.entries).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
  });

  it('404 routing_plan_not_found for unknown and malformed routing plan ids, before anything is sent upstream', async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-plan', '-'.repeat(36), 'abcdefabcdefabcdefabcdefabcdefabcdef']) {
      const r = await call('POST', `/r/${id}/v1/chat/completions`, { headers: keyHeader(o.key), json: ROUTES[0].json });
      expect(r.status, `${id}: ${r.text}`).to.equal(404);
      expect(r.body.error.code).to.equal('routing_plan_not_found');
    }
    expect(env().sim.log.entries).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
  });

  it('an unknown path under /a/{api_key}/ answers 404 without echoing the key', async () => {
    const r = await call('GET', `/a/${o.key}/v1/no-such-route`);
    expect(r.status).to.equal(404);
    expect(r.body.error.code).to.equal('not_found');
    expect(r.text).not.to.include(o.key);
    const wrongMethod = await call('GET', `/a/${o.key}/v1/embeddings`);
    expect(wrongMethod.status).to.equal(405);
    expect(wrongMethod.body.error.code).to.equal('method_not_allowed');
    expect(wrongMethod.text).not.to.include(o.key);
    // odd spellings of the prefix that express does not route still reach the 404's message
    for (const path of [`//a/${o.key}/v1/nope`, `/a//${o.key}/v1/nope`, `/A/${o.key}/v1/nope`]) {
      const odd = await fetch(`${env().gw.url}${path}`, { headers: keyHeader(o.key) });
      const text = await odd.text();
      expect(odd.status, path).to.be.within(400, 499);
      expect(text, path).not.to.include(o.key);
    }
  });

  it("a key bound to a project that is archived stops working on its next request (401 INVALID_API_KEY, nothing sent or billed); the org's unbound key goes on", async () => {
    const org = await buildOrg(env().redis);
    const p = await createProject(env().redis, org.org.id, 'Short-lived', `short-${Date.now()}`);
    const key = (await createApiKey(env().redis, { orgId: org.org.id, projectId: p.id })).key;
    expect((await call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: ROUTES[0].json })).status).to.equal(200);
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: org.org.id } });
    await resetSim();
    expect(await archiveProject(env().redis, org.org.id, p.slug)).to.not.equal(null);
    for (const route of ROUTES) {
      const r = await call('POST', route.path, { headers: { ...route.headers, ...keyHeader(key) }, json: route.json });
      expectInvalidKey(r, `${route.path} archived project`);
      expect(r.body.error.message).to.equal('The project this API key is bound to is archived.');
    }
    expect(env().sim.log.entries, 'nothing sent').to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: org.org.id } }), 'nothing billed').to.equal(before);
    expect((await call('POST', '/v1/chat/completions', { headers: keyHeader(org.key), json: ROUTES[0].json })).status, 'the unbound key').to.equal(200);
  });
});
