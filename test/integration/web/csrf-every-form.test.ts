import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildPlatformAdmin, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { buildWebMember, WebClient, WEB_PASSWORD } from '../../helpers/web-client';
import { stateChangingRoutes } from '../../helpers/routes';
import { searchOrg, type SearchOrg } from '../search/helpers';
import { dashboardRouter } from '../../../api/dashboard/router';
import { consoleRouter } from '../../../api/admin/console/router';
import { ApiKey, AuditLog, InviteCode, Membership, Organization, PlatformKey, Project, SearchOrgKey, SearchSetting, User } from '../../../shared/db/models';
import { encrypt } from '../../../shared/crypto';
import { setPassword } from '../../../shared/web/passwords';
import { createPasswordLink, peekPasswordLink } from '../../../shared/web/password-links';
import { readSwitches } from '../../../shared/switches/switches';
import { createInvitation } from '../../../shared/tenancy/invitations';

/** Fields that would make each form do something if its CSRF check let it through. */
const FORGED = {
  name: 'forged', slug: 'forged', org_wide: 'true', project: '', enabled: 'true', monthly_limit: '900', confirm: 'yes', cap: '1',
  provider: 'exa', api_key: 'forged-key-1234', plan_id: '', lane_overrides: 'chat:interactive=1', scopes: 'stats:read', engaged: 'true', password: 'a forged new password', email: 'forged-invitee@example.com', role: 'owner', budget_usd: '900',
};

describe('CSRF on every state-changing form of the dashboard and the console (routes read from the routers)', () => {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  let o: SearchOrg;
  let owner: User;
  let member: User;
  let victim: User;
  let operator: User;
  let platformKeyId: string;
  let token: string;
  let invite: InviteCode;
  before(async () => {
    admin = await startAdmin();
    o = await searchOrg({ monthlyAllowance: 100, overageMonthlyLimit: 500 });
    owner = await buildWebMember(o.org.id, 'owner');
    member = await buildWebMember(o.org.id, 'member');
    victim = await buildWebMember(o.org.id, 'member');
    operator = await buildPlatformAdmin();
    await setPassword(operator, WEB_PASSWORD);
    platformKeyId = (await buildPlatformKey(['stats:read'])).id;
    token = await createPasswordLink(env().redis, owner.id, 'reset');
    invite = await createInvitation(o.org.id, 'forged-invitee@example.com', 'owner');
    await SearchOrgKey.create({ orgId: o.org.id, provider: 'brave', keyEncrypted: encrypt('own-key-1234'), last4: '1234' });
  });
  after(() => admin.close());

  /** A concrete path for a route; an unknown parameter fails the test, so a new kind of route gets a value here. */
  const fill = (route: string): string =>
    route.replace(/:(\w+)/g, (_, name: string) => {
      if (name === 'org') return o.org.slug;
      if (name === 'userId') return member.id;
      if (name === 'provider') return 'brave';
      if (name === 'token') return token;
      if (name === 'code') return invite.code;
      if (name === 'feature') return 'web_search';
      if (name === 'action') return 'delete';
      if (name === 'id' && route.startsWith('/dashboard/o/:org/keys/')) return o.keyId;
      if (name === 'id' && route.startsWith('/dashboard/o/:org/projects/')) return o.project.id;
      if (name === 'id' && route.startsWith('/dashboard/o/:org/members/invitations/')) return invite.id;
      if (name === 'id' && route.startsWith('/orgs/')) return o.org.id;
      if (name === 'id' && route.startsWith('/keys/')) return platformKeyId;
      if (name === 'id' && route.startsWith('/users/')) return victim.id;
      throw new Error(`no value for :${name} in ${route}: add one here`);
    });

  const snapshot = async () => ({
    audit: await AuditLog.count(),
    keys: (await ApiKey.findAll({ where: { orgId: o.org.id }, order: [['id', 'ASC']] })).map((k) => [k.id, k.userId, k.revokedAt]),
    projects: (await Project.findAll({ where: { orgId: o.org.id }, order: [['id', 'ASC']] })).map((p) => [p.id, p.archivedAt, p.budgetMicros]),
    search: (await SearchSetting.findAll({ where: { orgId: o.org.id } })).map((s) => [s.overageEnabled, s.overageMonthlyLimit]),
    ownKeys: (await SearchOrgKey.findAll({ where: { orgId: o.org.id }, order: [['provider', 'ASC']] })).map((k) => [k.provider, k.last4]),
    members: (await Membership.findAll({ where: { orgId: o.org.id }, order: [['userId', 'ASC']] })).map((m) => [m.userId, m.role, m.searchCap, m.searchEnabled]),
    org: ((r) => [r.planId, r.laneOverrides])((await Organization.findByPk(o.org.id))!),
    platformKeys: await PlatformKey.count({ where: { revokedAt: null } }),
    victim: ((u) => [u.deletedAt, u.isPlatformAdmin])((await User.findByPk(victim.id))!),
    owner: (await User.findByPk(owner.id))!.passwordHash,
    link: await peekPasswordLink(env().redis, token),
    invites: (await InviteCode.findAll({ where: { orgId: o.org.id }, order: [['id', 'ASC']] })).map((i) => [i.id, i.uses, i.disabled]),
    users: await User.count(),
    orgs: await Organization.count(),
    allInvites: await InviteCode.count(),
    switches: await readSwitches(env().redis),
  });

  async function forgeAll(web: WebClient, routes: string[], signedInPage: string): Promise<void> {
    expect((await web.get(signedInPage)).status, 'signed in').to.equal(200);
    const before = await snapshot();
    for (const route of routes) {
      const [method, path] = route.split(' ');
      for (const csrf of [undefined, 'not-the-token', web.csrf.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'))]) {
        const form = { ...FORGED, ...(csrf === undefined ? {} : { _csrf: csrf }) };
        const r = await web.request(method, fill(path), { form, headers: { accept: 'application/json' } });
        expect(r.status, `${route} with ${csrf === undefined ? 'no token' : 'a wrong token'}: ${r.text.slice(0, 200)}`).to.equal(403);
        expect(r.body.error.code, route).to.equal('invalid_csrf_token');
      }
    }
    expect(await snapshot(), 'nothing changed').to.deep.equal(before);
    expect((await web.get(signedInPage)).status, 'still signed in (sign-out was refused too)').to.equal(200);
  }

  it('dashboard: every POST route answers 403 invalid_csrf_token without the token or with a wrong one, for a signed-in owner, and changes nothing', async () => {
    const routes = stateChangingRoutes(dashboardRouter({ redis: env().redis, directory: env().gw.ctx.directory }), '/dashboard');
    // the enumeration sees the forms (a router walk that found nothing would prove nothing)
    expect(routes).to.include.members([
      'POST /dashboard/sign-in', 'POST /dashboard/sign-out', 'POST /dashboard/password/:token', 'POST /dashboard/o/:org/projects',
      'POST /dashboard/o/:org/search/overage', 'POST /dashboard/o/:org/search/limit', 'POST /dashboard/o/:org/search/members/:userId',
      'POST /dashboard/o/:org/search/keys', 'POST /dashboard/o/:org/search/keys/:provider/remove',
      'POST /dashboard/invite/:code', 'POST /dashboard/o/:org/members/invitations', 'POST /dashboard/o/:org/members/invitations/:id/revoke',
      'POST /dashboard/o/:org/members/:userId/role', 'POST /dashboard/o/:org/members/:userId/remove',
    ]);
    expect(routes.filter((r) => r.includes('/keys/:id/revoke'))).to.have.length(1);
    const web = new WebClient(env().gw.url);
    expect((await web.signIn('/dashboard/sign-in', owner.email, WEB_PASSWORD)).status).to.equal(303);
    await forgeAll(web, routes, `/dashboard/o/${o.org.slug}/search`);
  });

  it('console: every POST route answers 403 invalid_csrf_token without the token or with a wrong one, for a signed-in operator, and changes nothing', async () => {
    const routes = stateChangingRoutes(consoleRouter(env().redis));
    expect(routes).to.include.members(['POST /sign-in', 'POST /sign-out', 'POST /orgs/:id/plan', 'POST /orgs/:id/lanes', 'POST /keys', 'POST /keys/:id/revoke', 'POST /switches/:feature', 'POST /users/:id/:action', 'POST /create/org', 'POST /create/user', 'POST /create/invitation']);
    const web = new WebClient(admin.url);
    expect((await web.signIn('/sign-in', operator.email, WEB_PASSWORD)).status).to.equal(303);
    await forgeAll(web, routes, '/users');
  });
});
