import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { adminCall, buildAdminToken, startAdmin } from '../../helpers/admin';
import { call, keyHeader } from '../../helpers/http';
import { buildWebMember, dashboardAs, WebClient, type WebReply } from '../../helpers/web-client';
import { searchOrg, type SearchOrg } from '../search/helpers';
import { ApiKey, AuditLog, Membership, Project, SearchOrgKey, SearchSetting, User } from '../../../shared/db/models';
import { encrypt } from '../../../shared/crypto';

/** What an owner-only form could change, read back after a refused post. */
async function snapshot(o: SearchOrg) {
  const s = await SearchSetting.findOne({ where: { orgId: o.org.id } });
  return {
    settings: s ? [s.overageEnabled, s.overageMonthlyLimit, s.monthlyAllowance] : null,
    members: (await Membership.findAll({ where: { orgId: o.org.id }, order: [['userId', 'ASC']] })).map((m) => [m.userId, m.searchCap, m.searchEnabled]),
    ownKeys: (await SearchOrgKey.findAll({ where: { orgId: o.org.id } })).map((k) => [k.provider, k.last4]),
    keys: (await ApiKey.findAll({ where: { orgId: o.org.id }, order: [['id', 'ASC']] })).map((k) => [k.id, k.userId, k.revokedAt]),
    projects: (await Project.findAll({ where: { orgId: o.org.id } })).map((p) => [p.id, p.archivedAt]),
  };
}

const expectRefused = (r: WebReply, status: number, code: string, what: string) => {
  expect(r.status, `${what}: ${r.text.slice(0, 200)}`).to.equal(status);
  expect(r.body?.error?.code, what).to.equal(code);
  expect(r.text, what).not.to.match(/at \w+ \(|node_modules/); // no stack trace
};

describe('owner-only dashboard forms: refused to members and to an operator impersonating an owner', () => {
  beforeEach(resetSim);

  it('a member POSTing to every owner-only form gets 403 owner_required and nothing changes', async () => {
    const o = await searchOrg({ monthlyAllowance: 100, overageMonthlyLimit: 500 });
    const member = await buildWebMember(o.org.id, 'member');
    await SearchOrgKey.create({ orgId: o.org.id, provider: 'brave', keyEncrypted: encrypt('own-key-1234'), last4: '1234' });
    const before = await snapshot(o);
    const web = await dashboardAs(member);
    await web.get(`/dashboard/o/${o.org.slug}/keys`); // a page of the org: its forms' CSRF token
    const b = `/dashboard/o/${o.org.slug}`;
    const forms: Array<[string, Record<string, string>]> = [
      [`${b}/search/overage`, { enabled: 'true', monthly_limit: '900', confirm: 'yes' }],
      [`${b}/search/overage`, { enabled: 'true', monthly_limit: '900' }], // the dialog step
      [`${b}/search/overage`, { enabled: 'false' }],
      [`${b}/search/limit`, { monthly_limit: '7' }],
      [`${b}/search/members/${member.id}`, { cap: '', enabled: 'true' }], // not even their own cap
      [`${b}/search/keys`, { provider: 'exa', api_key: 'member-key-5678' }],
      [`${b}/search/keys/brave/remove`, {}],
      [`${b}/projects/${o.project.id}/archive`, {}],
      [`${b}/keys`, { name: 'wide', org_wide: 'true' }],
      [`${b}/keys/${o.keyId}/revoke`, {}],
    ];
    for (const [path, form] of forms) expectRefused(await web.post(path, form, { json: true }), 403, 'owner_required', `${path} ${JSON.stringify(form)}`);
    expect(await snapshot(o)).to.deep.equal(before);
    expect((await call('GET', '/v1/models', { headers: keyHeader(o.key) })).status).to.equal(200);
  });

  it('an operator impersonating an owner cannot change overage, the monthly limit or member controls (403 impersonation_forbidden)', async () => {
    const admin = await startAdmin();
    try {
      const o = await searchOrg({ monthlyAllowance: 100, overageMonthlyLimit: 500 });
      const owner = await buildWebMember(o.org.id, 'owner');
      const member = await buildWebMember(o.org.id, 'member');
      const { token } = await buildAdminToken();
      const ticket = await adminCall(admin.url, token, 'POST', `/admin/v1/users/${owner.id}/impersonate`);
      expect(ticket.status, ticket.text).to.equal(201);
      const web = new WebClient(env().gw.url);
      expect((await web.get(ticket.body.path)).status).to.equal(303);
      const page = await web.get(`/dashboard/o/${o.org.slug}/search`); // the owner's page opens: it only looks
      expect(page.status).to.equal(200);
      expect(page.text).to.include('web search settings and password changes are disabled');
      const before = await snapshot(o);
      const b = `/dashboard/o/${o.org.slug}/search`;
      const forms: Array<[string, Record<string, string>]> = [
        [`${b}/overage`, { enabled: 'true', monthly_limit: '900', confirm: 'yes' }],
        [`${b}/overage`, { enabled: 'true', monthly_limit: '900' }],
        [`${b}/limit`, { monthly_limit: '600' }],
        [`${b}/members/${member.id}`, { cap: '3', enabled: 'true' }],
        [`${b}/keys`, { provider: 'exa', api_key: 'operator-key-5678' }],
      ];
      for (const [path, form] of forms) expectRefused(await web.post(path, form, { json: true }), 403, 'impersonation_forbidden', `${path} ${JSON.stringify(form)}`);
      expect(await snapshot(o)).to.deep.equal(before);
      expect(await AuditLog.count({ where: { family: 'search', targetId: o.org.id } })).to.equal(0);
      // the owner, signed in themselves, may
      const self = await dashboardAs((await User.findByPk(owner.id))!);
      await self.get(b);
      expect((await self.post(`${b}/limit`, { monthly_limit: '600' })).status).to.equal(303);
      expect((await SearchSetting.findOne({ where: { orgId: o.org.id } }))!.overageMonthlyLimit).to.equal(600);
    } finally {
      await admin.close();
    }
  });
});
