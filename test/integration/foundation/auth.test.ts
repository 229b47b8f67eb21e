import { expect } from 'chai';
import { env, startGateway } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { createApiKey, createProject, revokeApiKey } from '../../../shared/tenancy/ops';
import { archiveProject } from '../../../shared/tenancy/projects';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { RoutingPlan } from '../../../shared/db/models';

function expectInvalidKey(r: { status: number; body: any; headers: Headers }) {
  expect(r.status).to.equal(401);
  expect(r.body.error.code).to.equal('INVALID_API_KEY');
  expect(r.body.error.message).to.be.a('string');
  expect(r.headers.get('x-service-request-id')).to.match(/^req_[0-9a-f]{24}$/);
}

describe('authentication on inference paths', () => {
  let o: TestOrg;
  before(async () => {
    o = await buildOrg(env().redis);
  });

  it('accepts SERVICE-API-KEY', async () => {
    const r = await call('GET', '/v1/models', { headers: keyHeader(o.key) });
    expect(r.status).to.equal(200);
    expect(r.headers.get('deprecation')).to.equal(null);
  });

  it('accepts Authorization: Bearer svc_…', async () => {
    const r = await call('GET', '/v1/models', { headers: { authorization: `Bearer ${o.key}` } });
    expect(r.status).to.equal(200);
  });

  it('accepts x-api-key: svc_…', async () => {
    const r = await call('GET', '/v1/models', { headers: { 'x-api-key': o.key } });
    expect(r.status).to.equal(200);
  });

  it('accepts the key in the path, with Deprecation: true', async () => {
    const r = await call('GET', `/a/${o.key}/v1/models`);
    expect(r.status).to.equal(200);
    expect(r.headers.get('deprecation')).to.equal('true');
  });

  it('accepts /a/{key}/p/{project}/ and attributes the project', async () => {
    const r = await call('GET', `/a/${o.key}/p/proj/v1/models`);
    expect(r.status).to.equal(200);
    expect(r.headers.get('deprecation')).to.equal('true');
    const bad = await call('GET', `/a/${o.key}/p/nope/v1/models`);
    expect(bad.status).to.equal(400);
    expect(bad.body.error.code).to.equal('invalid_project');
  });

  it('serves /r/{routing_plan_id}/ for a plan of the key’s org only', async () => {
    const plan = await RoutingPlan.create({ orgId: o.org.id, projectId: o.project.id, name: 'main' });
    const ok = await call('GET', `/r/${plan.id}/v1/models`, { headers: keyHeader(o.key) });
    expect(ok.status).to.equal(200);
    const other = await buildOrg(env().redis);
    const foreign = await call('GET', `/r/${plan.id}/v1/models`, { headers: keyHeader(other.key) });
    expect(foreign.status).to.equal(404);
    expect(foreign.body.error.code).to.equal('routing_plan_not_found');
    const missing = await call('GET', `/r/00000000-0000-0000-0000-000000000000/v1/models`, { headers: keyHeader(o.key) });
    expect(missing.status).to.equal(404);
    expect(missing.body.error.code).to.equal('routing_plan_not_found');
  });

  it("refuses /r/{routing_plan_id}/ once the plan's project is archived (400 invalid_project), as the project's own id or slug is", async () => {
    const own = await buildOrg(env().redis);
    const p = await createProject(env().redis, own.org.id, 'Old', 'old-plan-project');
    const plan = await RoutingPlan.create({ orgId: own.org.id, projectId: p.id, name: 'archived-project-plan' });
    await bumpEpoch(env().redis);
    expect((await call('GET', `/r/${plan.id}/v1/models`, { headers: keyHeader(own.key) })).status).to.equal(200);
    await archiveProject(env().redis, own.org.id, p.id);
    const r = await call('POST', `/r/${plan.id}/v1/chat/completions`, { headers: keyHeader(own.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] } });
    expect(r.status).to.equal(400);
    expect(r.body.error.code).to.equal('invalid_project');
    expect(r.body.error.message).to.match(/archived/);
    // a key bound to another project still runs under its own (the plan's project is not used)
    const bound = await createApiKey(env().redis, { orgId: own.org.id, projectId: own.project.id });
    expect((await call('GET', `/r/${plan.id}/v1/models`, { headers: keyHeader(bound.key) })).status).to.equal(200);
  });

  it('rejects a missing key', async () => expectInvalidKey(await call('GET', '/v1/models')));
  it('rejects a malformed key', async () => expectInvalidKey(await call('GET', '/v1/models', { headers: keyHeader('svc_short!') })));
  it('rejects an unknown key', async () => expectInvalidKey(await call('GET', '/v1/models', { headers: keyHeader(`svc_${'a'.repeat(40)}`) })));
  it('rejects a management key', async () =>
    expectInvalidKey(await call('GET', '/v1/models', { headers: { authorization: `Bearer svc_platform_${'a'.repeat(40)}` } })));
  it('rejects a management key in SERVICE-API-KEY', async () =>
    expectInvalidKey(await call('GET', '/v1/models', { headers: keyHeader(`svc_platform_${'b'.repeat(40)}`) })));
  it('rejects a value with the wrong prefix in SERVICE-API-KEY', async () =>
    expectInvalidKey(await call('GET', '/v1/models', { headers: keyHeader(`sk-${'a'.repeat(40)}`) })));
  it('does not take a non-svc bearer as a gateway key', async () =>
    expectInvalidKey(await call('GET', '/v1/models', { headers: { authorization: `Bearer sk-${'a'.repeat(40)}` } })));

  it('rejects a revoked key on the next request, also on a second pod that had it cached', async () => {
    const fresh = await buildOrg(env().redis);
    const second = await startGateway('second-pod');
    try {
      expect((await call('GET', '/v1/models', { headers: keyHeader(fresh.key) })).status).to.equal(200);
      expect((await call('GET', '/v1/models', { headers: keyHeader(fresh.key), base: second.url })).status).to.equal(200);
      expect(await revokeApiKey(env().redis, fresh.keyId)).to.equal(true);
      expectInvalidKey(await call('GET', '/v1/models', { headers: keyHeader(fresh.key), base: second.url }));
      expectInvalidKey(await call('GET', '/v1/models', { headers: keyHeader(fresh.key) }));
    } finally {
      await second.close();
    }
  });

  it('attributes SERVICE-PROJECT-ID and rejects an unknown project', async () => {
    const ok = await call('GET', '/v1/models', { headers: { ...keyHeader(o.key), 'SERVICE-PROJECT-ID': 'proj' } });
    expect(ok.status).to.equal(200);
    const bad = await call('GET', '/v1/models', { headers: { ...keyHeader(o.key), 'SERVICE-PROJECT-ID': 'missing' } });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.code).to.equal('invalid_project');
  });
});

describe('request ids and the error envelope', () => {
  let o: TestOrg;
  before(async () => {
    o = await buildOrg(env().redis);
  });

  it('puts x-service-request-id on unknown paths (404)', async () => {
    const r = await call('GET', '/v1/nope', { headers: keyHeader(o.key) });
    expect(r.status).to.equal(404);
    expect(r.body.error.code).to.equal('not_found');
    expect(r.headers.get('x-service-request-id')).to.match(/^req_/);
  });

  it('answers 405 with Allow and a request id for a wrong method', async () => {
    const r = await call('GET', '/v1/embeddings', { headers: keyHeader(o.key) });
    expect(r.status).to.equal(405);
    expect(r.headers.get('allow')).to.equal('POST');
    expect(r.body.error.code).to.equal('method_not_allowed');
    expect(r.headers.get('x-service-request-id')).to.match(/^req_/);
  });

  it('answers malformed JSON with 400 invalid_json, no stack', async () => {
    const r = await call('POST', '/v1/chat/completions', { headers: { ...keyHeader(o.key), 'content-type': 'application/json' }, raw: '{"model": ' });
    expect(r.status).to.equal(400);
    expect(r.body.error.code).to.equal('invalid_json');
    expect(r.text).not.to.match(/at .*\.js:\d+/);
  });

  it('answers valid JSON that is not an object with 400 invalid_request on every JSON route', async () => {
    const routes = ['/v1/chat/completions', '/v1/completions', '/v1/messages', '/v1/responses', '/v1/embeddings', '/v1/rerank', '/v1/images/generations', '/v1/images/uploads', '/v1/images/edits'];
    for (const path of routes) {
      for (const raw of ['"text"', '42', 'null', 'true', '[]']) {
        const r = await call('POST', path, { headers: { ...keyHeader(o.key), 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, raw });
        expect([path, raw, r.status, r.body.error?.code]).to.deep.equal([path, raw, 400, 'invalid_request']);
      }
    }
  });

  it('answers a body in an encoding the parser cannot read with 415 unsupported_content_encoding', async () => {
    const r = await call('POST', '/v1/chat/completions', {
      headers: { ...keyHeader(o.key), 'content-type': 'application/json', 'content-encoding': 'x-unknown' },
      raw: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(r.status, r.text).to.equal(415);
    expect(r.body.error.code).to.equal('unsupported_content_encoding');
    expect(r.text).not.to.match(/at .*\.js:\d+/);
  });

  it('answers a wrong content type with 415', async () => {
    const r = await call('POST', '/v1/chat/completions', { headers: { ...keyHeader(o.key), 'content-type': 'text/plain' }, raw: 'hello' });
    expect(r.status).to.equal(415);
    expect(r.body.error.code).to.equal('unsupported_media_type');
  });

  it('answers an oversized body with 413', async () => {
    const big = JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'x'.repeat(21 * 1024 * 1024) }] });
    const r = await call('POST', '/v1/chat/completions', { headers: { ...keyHeader(o.key), 'content-type': 'application/json' }, raw: big });
    expect(r.status).to.equal(413);
    expect(r.body.error.code).to.equal('payload_too_large');
  });

  it('answers /healthz without a key', async () => {
    const r = await call('GET', '/healthz');
    expect(r.status).to.equal(200);
    expect(r.body.checks).to.deep.equal({ redis: 'ok', postgres: 'ok' });
  });
});
