import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildPlatformAdmin, startAdmin } from '../../helpers/admin';
import { buildOrg } from '../../helpers/factories';
import { buildWebMember, WebClient, WEB_PASSWORD } from '../../helpers/web-client';
import { createPasswordLink } from '../../../shared/web/password-links';
import { createInvitation } from '../../../shared/tenancy/invitations';
import { setPassword } from '../../../shared/web/passwords';
import { ApiKey } from '../../../shared/db/models';

/**
 * The refusals the sign-in, password and invitation pages draw themselves: a JSON client gets the
 * error envelope (as from every other form), a browser the page again with the message.
 */
describe('sign-in, password link and invitation refusals: the JSON envelope for a JSON client, the page for a browser', () => {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  before(async () => {
    admin = await startAdmin();
  });
  after(() => admin.close());

  const json = { accept: 'application/json' };
  const envelope = (r: { status: number; headers: Record<string, unknown>; body: any }, status: number, code: string, message: RegExp) => { // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(r.status).to.equal(status);
    expect(String(r.headers['content-type'])).to.match(/^application\/json/);
    expect(r.body.error.code).to.equal(code);
    expect(r.body.error.message).to.match(message);
  };

  it('a wrong dashboard sign-in: 401 invalid_credentials to a JSON client, the sign-in page at 401 to a browser', async () => {
    const web = new WebClient(env().gw.url, '127.0.0.21');
    await web.get('/dashboard/sign-in');
    envelope(await web.request('POST', '/dashboard/sign-in', { form: { _csrf: web.csrf, email: 'nobody@example.com', password: 'wrong password' }, headers: json }), 401, 'invalid_credentials', /^Wrong email or password\.$/);
    const page = await web.post('/dashboard/sign-in', { email: 'nobody@example.com', password: 'wrong password' });
    expect([page.status, String(page.headers['content-type'])]).to.deep.equal([401, 'text/html; charset=utf-8']);
    expect(page.text).to.include('Wrong email or password.').and.include('name="password"');
  });

  it('a wrong console sign-in: 401 invalid_credentials to a JSON client, the sign-in page at 401 to a browser', async () => {
    const operator = await buildPlatformAdmin();
    await setPassword(operator, WEB_PASSWORD);
    const web = new WebClient(admin.url, '127.0.0.22');
    await web.get('/sign-in');
    envelope(await web.request('POST', '/sign-in', { form: { _csrf: web.csrf, email: operator.email, password: 'not the password' }, headers: json }), 401, 'invalid_credentials', /^Wrong email or password\.$/);
    const page = await web.post('/sign-in', { email: operator.email, password: 'not the password' });
    expect([page.status, String(page.headers['content-type'])]).to.deep.equal([401, 'text/html; charset=utf-8']);
    expect(page.text).to.include('Wrong email or password.');
  });

  it('a too short password on a password link: 400 invalid_request to a JSON client, the form at 400 to a browser; the link still works', async () => {
    const o = await buildOrg(env().redis);
    const user = await buildWebMember(o.org.id, 'member');
    const token = await createPasswordLink(env().redis, user.id, 'reset');
    const web = new WebClient(env().gw.url);
    await web.get(`/dashboard/password/${token}`);
    const r = await web.request('POST', `/dashboard/password/${token}`, { form: { _csrf: web.csrf, password: 'short' }, headers: json });
    envelope(r, 400, 'invalid_request', /at least \d+ characters/);
    const page = await web.post(`/dashboard/password/${token}`, { password: 'short' });
    expect([page.status, String(page.headers['content-type'])]).to.deep.equal([400, 'text/html; charset=utf-8']);
    expect((await web.post(`/dashboard/password/${token}`, { password: 'a long enough new password' })).status).to.equal(303);
  });

  it('an invitation form refused (a too short password for a new account): 400 invalid_request to a JSON client, the invitation page at 400 to a browser', async () => {
    const o = await buildOrg(env().redis);
    const invite = await createInvitation(o.org.id, `new-${o.org.slug}@example.com`, 'member');
    const web = new WebClient(env().gw.url, '127.0.0.23');
    await web.get(`/dashboard/invite/${invite.code}`);
    envelope(await web.request('POST', `/dashboard/invite/${invite.code}`, { form: { _csrf: web.csrf, password: 'short' }, headers: json }), 400, 'invalid_request', /at least \d+ characters/);
    const page = await web.post(`/dashboard/invite/${invite.code}`, { password: 'short' });
    expect([page.status, String(page.headers['content-type'])]).to.deep.equal([400, 'text/html; charset=utf-8']);
    expect(page.text).to.match(/A password needs at least \d+ characters/);
  });
  it('a form sent again with its one-time token (a key create): 409 form_resent to a JSON client, the page with its notice to a browser; one key made', async () => {
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    const web = new WebClient(env().gw.url, '127.0.0.24');
    expect((await web.signIn('/dashboard/sign-in', owner.email, WEB_PASSWORD)).status).to.equal(303);
    await web.get(`/dashboard/o/${o.org.slug}/keys`);
    const form = { name: 'once', _once: 'AAAAAAAAAAAAAAAAAAAAAA' };
    const keysOf = () => ApiKey.count({ where: { orgId: o.org.id, name: 'once' } });
    expect((await web.post(`/dashboard/o/${o.org.slug}/keys`, form)).status).to.equal(201);
    envelope(await web.post(`/dashboard/o/${o.org.slug}/keys`, form, { json: true }), 409, 'form_resent', /already sent/);
    const page = await web.post(`/dashboard/o/${o.org.slug}/keys`, form);
    expect([page.status, String(page.headers['content-type'])]).to.deep.equal([409, 'text/html; charset=utf-8']);
    expect(page.text).to.include('data-test="resent"');
    expect(await keysOf()).to.equal(1);
  });
});
