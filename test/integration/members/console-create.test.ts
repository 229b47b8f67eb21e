import { expect } from 'chai';
import crypto from 'crypto';
import { env, resetSim } from '../../helpers/harness';
import { buildPlatformAdmin, startAdmin } from '../../helpers/admin';
import { WebClient, WEB_PASSWORD, type WebReply } from '../../helpers/web-client';
import { AuditLog, InviteCode, Membership, Organization, User } from '../../../shared/db/models';
import { setPassword } from '../../../shared/web/passwords';
import { peekPasswordLink } from '../../../shared/web/password-links';
import { readSwitches, setSwitch } from '../../../shared/switches/switches';

const linkIn = (r: WebReply) => /data-test="link">[^<]*?(\/dashboard\/[a-z]+\/[A-Za-z0-9_-]+)</.exec(r.text)?.[1] ?? '';
const expectCode = (r: WebReply, status: number, code: string) => {
  expect(r.status, r.text.slice(0, 300)).to.equal(status);
  expect(r.body.error.code).to.equal(code);
};

describe('operator console: creates organizations, users and invitations; confirms before a kill switch for every organization', () => {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  let web: WebClient;
  before(async () => {
    admin = await startAdmin();
    const op = await buildPlatformAdmin();
    await setPassword(op, WEB_PASSWORD);
    web = new WebClient(admin.url);
    expect((await web.signIn('/sign-in', op.email, WEB_PASSWORD)).status).to.equal(303);
  });
  after(async () => {
    await setSwitch(env().redis, 'web_search', false);
    await admin.close();
  });
  beforeEach(resetSim);

  it('creates an organization, a user with a password link, and an invitation the invitee redeems as owner; duplicates refused', async () => {
    const slug = `con-${crypto.randomBytes(4).toString('hex')}`;
    expect((await web.get('/create')).status).to.equal(200);
    const org = await web.post('/create/org', { name: `Console ${slug}`, slug, plan: 'pro' });
    expect(org.status, org.text.slice(0, 300)).to.equal(201);
    const row = (await Organization.findOne({ where: { slug } }))!;
    expect(row.name).to.equal(`Console ${slug}`);
    expect(row.planId).to.not.equal(null);
    expectCode(await web.post('/create/org', { name: 'again', slug }, { json: true }), 409, 'organization_exists');
    expect(await AuditLog.count({ where: { targetId: row.id, path: '/admin/v1/organizations' } })).to.equal(1);

    const email = `con-${crypto.randomBytes(4).toString('hex')}@example.com`;
    const user = await web.post('/create/user', { email, name: 'New person' });
    expect(user.status, user.text.slice(0, 300)).to.equal(201);
    const u = (await User.findOne({ where: { email } }))!;
    const token = linkIn(user).split('/').pop()!;
    expect(linkIn(user)).to.match(/^\/dashboard\/password\//);
    expect(await peekPasswordLink(env().redis, token)).to.equal(u.id);
    expectCode(await web.post('/create/user', { email: email.toUpperCase() }, { json: true }), 409, 'user_exists');
    expectCode(await web.post('/create/user', { email: 'nope' }, { json: true }), 400, 'invalid_request');

    const invitee = `inv-${crypto.randomBytes(4).toString('hex')}@example.com`;
    const inv = await web.post('/create/invitation', { org: slug, email: invitee, role: 'owner' });
    expect(inv.status, inv.text.slice(0, 300)).to.equal(201);
    expect(linkIn(inv)).to.match(/^\/dashboard\/invite\//);
    const browser = new WebClient(env().gw.url);
    expect((await browser.get(linkIn(inv))).status).to.equal(200);
    const joined = await browser.post(linkIn(inv), { password: WEB_PASSWORD });
    expect(joined.status, joined.text.slice(0, 300)).to.equal(303);
    const member = (await User.findOne({ where: { email: invitee } }))!;
    expect((await Membership.findOne({ where: { orgId: row.id, userId: member.id } }))!.role).to.equal('owner');
    expectCode(await web.post('/create/invitation', { org: 'no-such-org', email: invitee }, { json: true }), 400, 'invalid_reference');
    expect(await InviteCode.count({ where: { orgId: row.id } })).to.equal(1);
  });

  it('engaging a kill switch asks for confirmation naming every organization and changes nothing until confirmed; releasing is immediate', async () => {
    await setSwitch(env().redis, 'web_search', false);
    await web.get('/switches');
    const asked = await web.post('/switches/web_search', { engaged: 'true' });
    expect(asked.status).to.equal(200);
    expect(asked.text).to.include('data-test="confirm-switch"').and.to.include('every organization').and.to.include('name="confirm" value="yes"');
    expect((await readSwitches(env().redis)).web_search, 'not engaged before Confirm').to.equal(false);
    const confirmed = await web.post('/switches/web_search', { engaged: 'true', confirm: 'yes' });
    expect(confirmed.status).to.equal(303);
    expect((await readSwitches(env().redis)).web_search).to.equal(true);
    await web.get('/switches');
    expect((await web.post('/switches/web_search', { engaged: 'false' })).status).to.equal(303);
    expect((await readSwitches(env().redis)).web_search).to.equal(false);
  });
});
