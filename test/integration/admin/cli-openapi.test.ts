import { expect } from 'chai';
import { execFile } from 'child_process';
import path from 'path';
import { promisify } from 'util';
import { adminCall, startAdmin } from '../../helpers/admin';
import { AuditLog } from '../../../shared/db/models';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../../../scripts/cli.js');
const gateway = (...args: string[]) => run(process.execPath, [cli, ...args], { env: process.env });

describe('management API: CLI and OpenAPI', () => {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  before(async () => {
    admin = await startAdmin();
  });
  after(() => admin.close());

  it('gateway user create, platform-admin grant, platform-key create; revoke demotes and kills the key', async function () {
    this.timeout(90_000); // eight CLI processes, each loading the app: about 6 s on a quiet machine, over 40 s on a loaded one
    const email = `cli-admin-${Date.now()}@example.com`;
    const user = JSON.parse((await gateway('user', 'create', '--email', email, '--json')).stdout);
    expect(user).to.include({ email, is_platform_admin: false });
    try {
      await gateway('platform-key', 'create', '--user', email, '--scopes', 'stats:read');
      expect.fail('a non-admin cannot own a platform key');
    } catch (err) {
      expect((err as { stderr: string }).stderr).to.include('is not a platform admin');
    }
    // --user takes the email in any letter case, as sign-in and the management API compare it
    await gateway('platform-admin', 'grant', '--user', email.toUpperCase());
    try {
      await gateway('platform-key', 'create', '--user', email, '--scopes', 'stats:read,teleport:write');
      expect.fail('unknown scopes are refused');
    } catch (err) {
      expect((err as { stderr: string }).stderr).to.include('unknown scope(s): teleport:write');
    }
    const k = JSON.parse((await gateway('platform-key', 'create', '--user', email, '--scopes', 'stats:read,users:write', '--json')).stdout);
    expect(k.key).to.match(/^svc_platform_/);
    expect(k.scopes).to.deep.equal(['stats:read', 'users:write']);
    expect((await adminCall(admin.url, k.key, 'GET', '/admin/v1/stats')).status).to.equal(200);
    expect((await adminCall(admin.url, k.key, 'GET', '/admin/v1/users')).status).to.equal(200);
    expect((await adminCall(admin.url, k.key, 'GET', '/admin/v1/plans')).status).to.equal(403);
    const created = await AuditLog.findOne({ where: { targetId: k.id, method: 'POST' } });
    expect(created).to.include({ actorType: 'cli', family: 'platform-keys' });

    const t = JSON.parse((await gateway('admin-token', 'create', '--user', email, '--json')).stdout);
    expect((await adminCall(admin.url, t.token, 'GET', '/admin/v1/platform-keys')).status).to.equal(200);

    expect((await gateway('platform-admin', 'revoke', '--user', email)).stdout).to.include('revoked 1 platform key(s)');
    expect((await adminCall(admin.url, k.key, 'GET', '/admin/v1/stats')).status).to.equal(401);
    expect((await adminCall(admin.url, t.token, 'GET', '/admin/v1/platform-keys')).status).to.equal(401);
    const listed = JSON.parse((await gateway('platform-key', 'list', '--json')).stdout);
    expect(listed.find((x: { id: string }) => x.id === k.id).state).to.equal('revoked');
    expect(JSON.stringify(listed)).not.to.include(k.key);
  });

  it('serves an OpenAPI document built from the validating schemas', async () => {
    const r = await adminCall(admin.url, null, 'GET', '/admin/v1/openapi.json');
    expect(r.status).to.equal(200);
    expect(r.body.openapi).to.equal('3.1.0');
    const paths = Object.keys(r.body.paths);
    for (const p of ['/admin/v1/stats', '/admin/v1/usage-stats', '/admin/v1/organizations', '/admin/v1/organizations/{id}', '/admin/v1/plans', '/admin/v1/providers',
      '/admin/v1/platform-credentials', '/admin/v1/inference-models', '/admin/v1/inference-model-pools', '/admin/v1/inference-tokenizer-profiles',
      '/admin/v1/search-providers', '/admin/v1/search-settings', '/admin/v1/stripe/customers', '/admin/v1/referrals', '/admin/v1/capability-policies/{id}',
      '/admin/v1/capability-policies/switches/{feature}', '/admin/v1/users', '/admin/v1/audit-logs', '/admin/v1/scheduler-endpoints', '/admin/v1/invite-codes',
      '/admin/v1/billing/wallets', '/admin/v1/billing/records', '/admin/v1/platform-keys/{id}', '/admin/v1/users/{id}/platform-admin']) {
      expect(paths, p).to.include(p);
    }
    const create = r.body.paths['/admin/v1/organizations'].post;
    const schema = create.requestBody.content['application/json'].schema;
    // the slug is derived from the name when omitted, by the CLI's rule, and the document says so
    expect(schema.required).to.deep.equal(['name']);
    expect(schema.properties.slug.description).to.match(/derived from `name` as `gateway org create` does/);
    expect(schema.additionalProperties).to.equal(false);
    expect(schema.properties.plan_id.type).to.deep.equal(['string', 'null']);
    expect(create['x-scope']).to.equal('organizations');
    // a write that was taken with warnings (a Bedrock profile's model AWS did not tell) says so
    const answerOf = (path: string, method: string, status: string) => r.body.paths[path][method].responses[status].content['application/json'].schema;
    for (const [path, method, status] of [['/admin/v1/inference-models', 'post', '201'], ['/admin/v1/inference-models/{id}', 'patch', '200'], ['/admin/v1/inference-model-pools', 'post', '201'], ['/admin/v1/inference-model-pools/{id}', 'delete', '200']]) {
      expect(answerOf(path, method, status).properties?.warnings, `${method} ${path}`).to.deep.include({ type: 'array' });
      expect(answerOf(path, method, status).properties.warnings.items.required).to.deep.equal(['code', 'message']);
    }
    // a provider's write that changes a bedrock provider's access asks its profiles again, with warnings
    for (const [path, method, status] of [['/admin/v1/providers', 'post', '201'], ['/admin/v1/providers/{id}', 'patch', '200'], ['/admin/v1/platform-credentials', 'post', '201'], ['/admin/v1/platform-credentials/{id}', 'patch', '200'], ['/admin/v1/platform-credentials/{id}', 'delete', '200']]) {
      expect(answerOf(path, method, status).properties?.warnings, `${method} ${path}`).to.deep.include({ type: 'array' });
    }
    expect(answerOf('/admin/v1/providers/{id}', 'delete', '200').properties ?? {}, "a provider's delete asks nothing").not.to.have.property('warnings');
    expect(answerOf('/admin/v1/organizations', 'post', '201').properties, 'a resource without a check of its own').not.to.have.property('warnings');
    const cred = r.body.paths['/admin/v1/platform-credentials/{id}'].get.responses['200'].content['application/json'].schema;
    expect(cred.properties).to.have.property('secret_hint');
    expect(cred.properties).not.to.have.property('secret');
    const sw = r.body.paths['/admin/v1/capability-policies/switches/{feature}'].put.requestBody.content['application/json'].schema;
    expect(sw).to.deep.equal({ type: 'object', properties: { engaged: { type: 'boolean' } }, required: ['engaged'], additionalProperties: false });
    expect(r.body.paths['/admin/v1/platform-keys'].post.security).to.deep.equal([{ adminToken: [] }]);
    // the documented success status is the one each route answers
    expect(Object.keys(r.body.paths['/admin/v1/platform-keys'].post.responses)).to.include('201').and.not.include('200');
    expect(Object.keys(r.body.paths['/admin/v1/billing/records'].post.responses)).to.include('201').and.not.include('200');
    expect(Object.keys(r.body.paths['/admin/v1/users/{id}/impersonate'].post.responses)).to.include('201');
  });
});
