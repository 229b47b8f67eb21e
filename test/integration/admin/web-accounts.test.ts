import { expect } from 'chai';
import { execFile } from 'child_process';
import path from 'path';
import { promisify } from 'util';
import { adminCall, buildAdminToken, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { buildOrg } from '../../helpers/factories';
import { env } from '../../helpers/harness';
import { call } from '../../helpers/http';
import { AuditLog, Membership, User } from '../../../shared/db/models';
import { verifyPassword } from '../../../shared/web/passwords';
import { config } from '../../../shared/config/env';
import { WebClient, WEB_PASSWORD, buildWebMember } from '../../helpers/web-client';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../../../scripts/cli.js');
const gateway = (args: string[], input?: string) =>
  new Promise<{ stdout: string }>((resolve, reject) => {
    const child = execFile(process.execPath, [cli, ...args], { env: process.env }, (err, stdout, stderr) => (err ? reject(Object.assign(err, { stderr })) : resolve({ stdout })));
    child.stdin!.end(input ?? '');
  });

describe('web accounts: impersonation API, projects, passwords from the CLI', () => {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  before(async () => {
    admin = await startAdmin();
  });
  after(() => admin.close());

  it('POST /users/:id/impersonate answers 201 with a one-use link that opens a marked dashboard session, audited', async () => {
    const { token, owner: op } = await buildAdminToken();
    const t = await buildOrg(env().redis);
    const user = await User.create({ email: `imp-${Date.now()}@example.com` });
    await Membership.create({ orgId: t.org.id, userId: user.id, role: 'member' });
    const r = await adminCall(admin.url, token, 'POST', `/admin/v1/users/${user.id}/impersonate`);
    expect(r.status).to.equal(201);
    expect(r.body).to.include({ object: 'impersonation', user_id: user.id, expires_in: 60 });
    const open = await fetch(`${env().gw.url}${r.body.path}`, { redirect: 'manual' });
    expect(open.status).to.equal(303);
    expect(open.headers.get('set-cookie')).to.match(/gw_dashboard=.*HttpOnly.*SameSite=Lax/i);
    const again = await call('GET', r.body.path);
    expect(again.status).to.equal(404);
    expect(again.body.error.code).to.equal('invalid_impersonation_ticket');
    await new Promise((res) => setTimeout(res, 200)); // the API audits after its answer
    const audited = await AuditLog.findAll({ where: { targetId: user.id } });
    expect(audited.map((a) => `${a.actorId} ${a.path} ${a.status}`)).to.include.members([`${op.id} /admin/v1/users/${user.id}/impersonate 201`, `${op.id} /dashboard/impersonate 200`]);

    const missing = await adminCall(admin.url, token, 'POST', '/admin/v1/users/00000000-0000-4000-8000-000000000000/impersonate');
    expect(missing.status).to.equal(404);
    expect(missing.body.error.code).to.equal('not_found');
  });

  it('projects: created through the organizations family, usable as SERVICE-PROJECT-ID, refused once archived', async () => {
    const k = await buildPlatformKey(['organizations:write']);
    const t = await buildOrg(env().redis);
    const made = await adminCall(admin.url, k.key, 'POST', `/admin/v1/organizations/${t.org.id}/projects`, { name: 'Batch jobs' });
    expect(made.status).to.equal(201);
    expect(made.body).to.include({ slug: 'batch-jobs', state: 'active' });
    const dup = await adminCall(admin.url, k.key, 'POST', `/admin/v1/organizations/${t.org.id}/projects`, { name: 'x', slug: 'batch-jobs' });
    expect(dup.status).to.equal(409);
    expect(dup.body.error.code).to.equal('project_exists');
    const headers = { authorization: `Bearer ${t.key}`, 'service-project-id': 'batch-jobs' };
    expect((await call('GET', '/v1/models', { headers })).status).to.equal(200);
    expect((await call('GET', `/a/${t.key}/p/batch-jobs/v1/models`)).status).to.equal(200);

    const archived = await adminCall(admin.url, k.key, 'POST', `/admin/v1/organizations/${t.org.id}/projects/batch-jobs/archive`);
    expect(archived.status).to.equal(200);
    expect(archived.body.state).to.equal('archived');
    const refused = await call('GET', '/v1/models', { headers });
    expect(refused.status).to.equal(400);
    expect(refused.body.error.code).to.equal('invalid_project');
    const list = await adminCall(admin.url, k.key, 'GET', `/admin/v1/organizations/${t.org.id}/projects`);
    expect(list.body.data.map((p: { slug: string; state: string }) => `${p.slug}:${p.state}`)).to.include.members(['proj:active', 'batch-jobs:archived']);
    const readOnly = await buildPlatformKey(['organizations:read']);
    const denied = await adminCall(admin.url, readOnly.key, 'POST', `/admin/v1/organizations/${t.org.id}/projects`, { name: 'nope' });
    expect(denied.status).to.equal(403);
    expect(denied.body.error.code).to.equal('insufficient_scope');
  });

  it('gateway user set-password / password-link, member add and project create', async function () {
    this.timeout(40_000);
    const t = await buildOrg(env().redis);
    const email = `Web-${Date.now()}@Example.com`;
    await run(process.execPath, [cli, 'user', 'create', '--email', email], { env: process.env });
    await gateway(['member', 'add', '--org', t.org.slug, '--user', email, '--role', 'owner']);
    const u = (await User.findOne({ where: { email } }))!;
    expect((await Membership.findOne({ where: { orgId: t.org.id, userId: u.id } }))!.role).to.equal('owner');

    try {
      await gateway(['user', 'set-password', '--user', email], 'short\n');
      expect.fail('a short password is refused');
    } catch (err) {
      expect((err as { stderr: string }).stderr).to.include('at least 10 characters');
    }
    await gateway(['user', 'set-password', '--user', email], 'a long enough password\n');
    await u.reload();
    expect(u.passwordHash).to.match(/^scrypt\$/);
    expect(await verifyPassword('a long enough password', u.passwordHash)).to.equal(true);
    expect(await verifyPassword('wrong', u.passwordHash)).to.equal(false);

    const link = (await gateway(['user', 'password-link', '--user', email, '--invite'])).stdout.trim();
    expect(link).to.match(/\/dashboard\/password\/[A-Za-z0-9_-]{32}$/);
    const form = await call('GET', new URL(link).pathname);
    expect(form.status).to.equal(200);
    expect(form.text).to.include('Choose a password');
    expect(form.headers.get('x-frame-options')).to.equal('SAMEORIGIN'); // helmet
    // posting without the form's CSRF token is refused and changes nothing
    const forged = await call('POST', new URL(link).pathname, { raw: 'password=another+long+password', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(forged.status).to.equal(403);
    expect(forged.body.error.code).to.equal('invalid_csrf_token');
    expect(await verifyPassword('a long enough password', (await u.reload()).passwordHash)).to.equal(true);

    const p = JSON.parse((await gateway(['project', 'create', '--org', t.org.slug, '--slug', 'cli-proj', '--json'])).stdout);
    expect(p).to.include({ slug: 'cli-proj', org_id: t.org.id });
    expect((await call('GET', '/v1/models', { headers: { authorization: `Bearer ${t.key}`, 'service-project-id': p.id } })).status).to.equal(200);
  });

  it('sessions live in Redis under the prefix; cookies are HttpOnly, SameSite=Lax, and Secure only behind TLS; a visitor stores nothing', async () => {
    const sessionKeys = async () => (await env().redis.keys(`${config().redisPrefix}:web:session:dashboard:*`)).length;
    const keysBefore = await sessionKeys();
    const plain = await fetch(`${env().gw.url}/dashboard/sign-in`);
    const plainCookies = plain.headers.getSetCookie();
    // a signed-out visitor's forms are bound to a cookie of its own, short-lived; no session is stored
    const visitor = plainCookies.find((c) => c.startsWith('gw_dashboard_visitor='))!;
    expect(visitor).to.match(/HttpOnly/i).and.match(/SameSite=Lax/i).and.match(/Path=\/dashboard/).and.match(/Max-Age=1800/);
    expect(visitor).not.to.match(/Secure/i);
    expect(plainCookies.some((c) => c.startsWith('gw_dashboard=')), 'no session cookie for a visitor').to.equal(false);
    for (let i = 0; i < 20; i++) await fetch(`${env().gw.url}/dashboard/sign-in`);
    expect(await sessionKeys(), 'page views by visitors write nothing to Redis').to.equal(keysBefore);
    // a visitor's token is bound to its cookie: another visitor's token does not pass with it
    const a = new WebClient(env().gw.url);
    const b = new WebClient(env().gw.url);
    await a.get('/dashboard/sign-in');
    await b.get('/dashboard/sign-in');
    const crossed = await a.post('/dashboard/sign-in', { _csrf: b.csrf, email: 'nobody@example.com', password: 'x' }, { json: true });
    expect([crossed.status, crossed.body.error.code]).to.deep.equal([403, 'invalid_csrf_token']);
    // signing in stores the session under the prefix, with the configured lifetime
    const t = await buildOrg(env().redis);
    const member = await buildWebMember(t.org.id, 'owner');
    expect((await a.signIn('/dashboard/sign-in', member.email, WEB_PASSWORD)).status).to.equal(303);
    const jar = (a as unknown as { cookies: Map<string, string> }).cookies;
    const sid = decodeURIComponent(jar.get('gw_dashboard')!).replace(/^s:/, '').split('.')[0];
    const key = `${config().redisPrefix}:web:session:dashboard:${sid}`;
    expect(await env().redis.exists(key)).to.equal(1);
    expect(await env().redis.ttl(key)).to.be.within(30 * 60 + 1, config().webSessionHours * 3600);
    const tlsClient = new WebClient(env().gw.url);
    await tlsClient.request('GET', '/dashboard/sign-in', { headers: { 'x-forwarded-proto': 'https' } });
    const tls = await tlsClient.request('POST', '/dashboard/sign-in', { form: { _csrf: tlsClient.csrf, email: member.email, password: WEB_PASSWORD }, headers: { 'x-forwarded-proto': 'https' } });
    expect(tls.status).to.equal(303);
    const tlsSession = ([] as string[]).concat(tls.headers['set-cookie'] ?? []).find((c) => c.startsWith('gw_dashboard='))!;
    expect(tlsSession).to.match(/HttpOnly/i).and.match(/SameSite=Lax/i).and.match(/Path=\/dashboard/).and.match(/;\s*Secure/i);
    const console = await fetch(`${admin.url}/sign-in`);
    expect(console.headers.getSetCookie().find((c) => c.startsWith('gw_console_visitor='))).to.match(/HttpOnly/i).and.match(/Path=\//);
    expect(console.headers.get('content-security-policy')).to.include("default-src 'self'");
    // console pages and the queue dashboard need a platform admin's session
    const page = await fetch(`${admin.url}/keys`, { redirect: 'manual' });
    expect(page.status).to.equal(303);
    expect(page.headers.get('location')).to.equal('/sign-in');
    const queues = await call('GET', '/admin/queues', { base: admin.url });
    expect(queues.status).to.equal(401);
    expect(queues.body.error.code).to.equal('unauthorized');
  });
});
