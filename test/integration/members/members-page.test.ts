import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { call, keyHeader } from '../../helpers/http';
import { buildWebMember, dashboardAs, WebClient, type WebReply } from '../../helpers/web-client';
import { adminCall, buildAdminToken, startAdmin } from '../../helpers/admin';
import { buildOrg } from '../../helpers/factories';
import { ApiKey, AuditLog, InviteCode, Membership } from '../../../shared/db/models';
import { createApiKey } from '../../../shared/tenancy/ops';
import { createInvitation } from '../../../shared/tenancy/invitations';

const models = (key: string) => call('GET', '/v1/models', { headers: keyHeader(key) });
const expectCode = (r: WebReply, status: number, code: string) => {
  expect(r.status, r.text.slice(0, 300)).to.equal(status);
  expect(r.body.error.code).to.equal(code);
};

describe("members page: owners see members, change roles, remove a member (whose keys stop at once), revoke invitations", () => {
  beforeEach(resetSim);

  it('an owner changes a role and removes a member: the member\'s key is refused on the very next request, the org-wide key keeps working', async () => {
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    const member = await buildWebMember(o.org.id, 'member');
    const leaving = await buildWebMember(o.org.id, 'member');
    const k = await createApiKey(env().redis, { orgId: o.org.id, userId: leaving.id });
    expect((await models(k.key)).status, 'works before').to.equal(200);

    const web = await dashboardAs(owner);
    const b = `/dashboard/o/${o.org.slug}/members`;
    const list = await web.get(b);
    expect(list.status).to.equal(200);
    for (const u of [owner, member, leaving]) expect(list.text).to.include(u.email);
    expect((await web.get(`/dashboard/o/${o.org.slug}/keys`)).text).to.include(`href="${b}"`); // the owner's nav links it

    const bad = await web.post(`${b}/${member.id}/role`, { role: 'admin' }, { json: true });
    expectCode(bad, 400, 'invalid_request');
    const promoted = await web.post(`${b}/${member.id}/role`, { role: 'owner' });
    expect(promoted.status).to.equal(303);
    expect((await Membership.findOne({ where: { orgId: o.org.id, userId: member.id } }))!.role).to.equal('owner');

    const removed = await web.post(`${b}/${leaving.id}/remove`);
    expect(removed.status, removed.text.slice(0, 300)).to.equal(303);
    expect(await Membership.count({ where: { orgId: o.org.id, userId: leaving.id } })).to.equal(0);
    const refused = await models(k.key);
    expect(refused.status, 'refused at once').to.equal(401);
    expect(refused.body.error.code).to.equal('INVALID_API_KEY');
    expect((await ApiKey.findByPk(k.id))!.revokedAt).to.not.equal(null);
    expect((await models(o.key)).status, 'the org-wide key is untouched').to.equal(200);
    expect(await AuditLog.count({ where: { targetId: leaving.id, path: `${b}/${leaving.id}/remove` } })).to.equal(1);
    expectCode(await web.post(`${b}/${leaving.id}/remove`, {}, { json: true }), 404, 'not_found');
  });

  it('the last owner can be neither demoted nor removed; a member is refused the page and every form', async () => {
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    const member = await buildWebMember(o.org.id, 'member');
    const inv = await createInvitation(o.org.id, 'x@example.com', 'member');
    const web = await dashboardAs(owner);
    const b = `/dashboard/o/${o.org.slug}/members`;
    await web.get(b);
    expectCode(await web.post(`${b}/${owner.id}/role`, { role: 'member' }, { json: true }), 409, 'last_owner');
    expectCode(await web.post(`${b}/${owner.id}/remove`, {}, { json: true }), 409, 'last_owner');
    expect((await Membership.findOne({ where: { orgId: o.org.id, userId: owner.id } }))!.role).to.equal('owner');

    const asMember = await dashboardAs(member);
    const keys = await asMember.get(`/dashboard/o/${o.org.slug}/keys`);
    expect(keys.text).not.to.include(`href="${b}"`);
    expectCode(await asMember.request('GET', b, { headers: { accept: 'application/json' } }), 403, 'owner_required');
    for (const [path, form] of [[`${b}/${owner.id}/role`, { role: 'member' }], [`${b}/${owner.id}/remove`, {}], [`${b}/invitations`, { email: 'y@example.com', role: 'owner' }], [`${b}/invitations/${inv.id}/revoke`, {}]] as const) {
      expectCode(await asMember.post(path, form, { json: true }), 403, 'owner_required');
    }
    expect(await Membership.count({ where: { orgId: o.org.id } })).to.equal(2);
    expect(await InviteCode.count({ where: { orgId: o.org.id } })).to.equal(1);
    expect((await InviteCode.findByPk(inv.id))!.disabled).to.equal(false);
  });

  it('an owner revokes an open invitation: its link answers the revoked page; another org\'s invitation is not theirs to revoke', async () => {
    const o = await buildOrg(env().redis);
    const other = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    const inv = await createInvitation(o.org.id, 'z@example.com', 'member');
    const foreign = await createInvitation(other.org.id, 'z@example.com', 'member');
    const web = await dashboardAs(owner);
    const b = `/dashboard/o/${o.org.slug}/members`;
    expect((await web.get(b)).text).to.include(`/dashboard/invite/${inv.code}`).and.not.to.include(foreign.code);
    expectCode(await web.post(`${b}/invitations/${foreign.id}/revoke`, {}, { json: true }), 404, 'not_found');
    expect((await InviteCode.findByPk(foreign.id))!.disabled).to.equal(false);
    expect((await web.post(`${b}/invitations/${inv.id}/revoke`)).status).to.equal(303);
    expect((await web.get(b)).text).not.to.include(inv.code);
    const page = await web.request('GET', `/dashboard/invite/${inv.code}`, { headers: { accept: 'application/json' } });
    expectCode(page, 410, 'invitation_revoked');
  });

  it('an operator impersonating an owner sees the members page but can neither invite, change roles, remove nor revoke (403 impersonation_forbidden)', async () => {
    const admin = await startAdmin();
    try {
      const o = await buildOrg(env().redis);
      const owner = await buildWebMember(o.org.id, 'owner');
      const member = await buildWebMember(o.org.id, 'member');
      const inv = await createInvitation(o.org.id, 'w@example.com', 'member');
      const { token } = await buildAdminToken();
      const ticket = await adminCall(admin.url, token, 'POST', `/admin/v1/users/${owner.id}/impersonate`);
      const web = new WebClient(env().gw.url);
      expect((await web.get(ticket.body.path)).status).to.equal(303);
      const b = `/dashboard/o/${o.org.slug}/members`;
      expect((await web.get(b)).status).to.equal(200);
      for (const [path, form] of [[`${b}/${member.id}/role`, { role: 'owner' }], [`${b}/${member.id}/remove`, {}], [`${b}/invitations`, { email: 'v@example.com', role: 'owner' }], [`${b}/invitations/${inv.id}/revoke`, {}]] as const) {
        expectCode(await web.post(path, form, { json: true }), 403, 'impersonation_forbidden');
      }
      expect((await Membership.findAll({ where: { orgId: o.org.id } })).map((m) => m.role).sort()).to.deep.equal(['member', 'owner']);
      expect(await InviteCode.count({ where: { orgId: o.org.id, disabled: false } })).to.equal(1);
    } finally {
      await admin.close();
    }
  });
});
