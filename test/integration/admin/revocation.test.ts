import { expect } from 'chai';
import { adminCall, buildAdminToken, buildPlatformAdmin, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { AdminToken, AuditLog, PlatformKey, User } from '../../../shared/db/models';
import { waitFor } from '../../helpers/wait';
import { deleteUser } from '../../../shared/platform/keys';

type Admin = Awaited<ReturnType<typeof startAdmin>>;

describe('management API: revocation and cross-surface rejection', () => {
  let a: Admin;
  let b: Admin; // a second admin pod: revocation must reach it on its next request too
  before(async () => {
    a = await startAdmin();
    b = await startAdmin();
  });
  after(async () => {
    await a.close();
    await b.close();
  });
  const works = async (key: string) => {
    expect((await adminCall(a.url, key, 'GET', '/admin/v1/plans')).status).to.equal(200);
    expect((await adminCall(b.url, key, 'GET', '/admin/v1/plans')).status).to.equal(200);
  };
  const dead = async (key: string) => {
    for (const base of [a.url, b.url]) {
      const r = await adminCall(base, key, 'GET', '/admin/v1/plans');
      expect(r.status).to.equal(401);
      expect(r.body.error.code).to.equal('invalid_platform_key');
    }
  };

  it('DELETE /admin/v1/platform-keys/:id stops the key on its next request, on every pod, and audits it', async () => {
    const { token, owner } = await buildAdminToken();
    const k = await buildPlatformKey(['plans:read'], owner);
    await works(k.key);
    const r = await adminCall(a.url, token, 'DELETE', `/admin/v1/platform-keys/${k.id}`);
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ id: k.id, state: 'revoked', revoked_reason: 'revoked' });
    await dead(k.key);
    const live = await buildPlatformKey(['plans:read'], owner);
    const listed = async (state: string) =>
      ((await adminCall(a.url, token, 'GET', `/admin/v1/platform-keys?user_id=${owner.id}&state=${state}`)).body.data as Array<{ id: string }>).map((x) => x.id);
    expect(await listed('revoked')).to.deep.equal([k.id]);
    expect(await listed('active')).to.deep.equal([live.id]);
    const entry = await waitFor(() => AuditLog.findOne({ where: { targetId: k.id, method: 'DELETE' } }));
    expect(entry).to.include({ actorType: 'admin_token', actorId: owner.id, status: 200, outcome: 'success' });
    expect((await adminCall(a.url, token, 'DELETE', `/admin/v1/platform-keys/00000000-0000-4000-8000-000000000000`)).status).to.equal(404);
  });

  it("the owner's demotion from platform admin revokes the key", async () => {
    const { token } = await buildAdminToken();
    const k = await buildPlatformKey(['plans:read']);
    await works(k.key);
    const r = await adminCall(a.url, token, 'PUT', `/admin/v1/users/${k.owner.id}/platform-admin`, { is_platform_admin: false });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ is_platform_admin: false, revoked_platform_keys: 1 });
    await dead(k.key);
    expect((await PlatformKey.findByPk(k.id))!.revokedReason).to.equal('owner_demoted');
    // Re-granting does not bring old keys back.
    const regrant = await adminCall(a.url, token, 'PUT', `/admin/v1/users/${k.owner.id}/platform-admin`, { is_platform_admin: true });
    expect(regrant.status, regrant.text).to.equal(200);
    expect(regrant.body).to.include({ id: k.owner.id, is_platform_admin: true, revoked_platform_keys: 0 });
    await dead(k.key);
    expect((await PlatformKey.findByPk(k.id))!.revokedReason).to.equal('owner_demoted');
    // both writes are audited against the user, in order, by the admin token that made them
    const path = `/admin/v1/users/${k.owner.id}/platform-admin`;
    const audited = await waitFor(async () => {
      const rows = await AuditLog.findAll({ where: { targetId: k.owner.id, method: 'PUT', path }, order: [['createdAt', 'ASC']] });
      return rows.length === 2 ? rows : undefined;
    });
    expect(audited, 'the demotion and the re-grant are audited').to.not.equal(undefined);
    for (const [entry, reply] of [[audited![0], r], [audited![1], regrant]] as const) {
      expect(entry).to.include({ actorType: 'admin_token', status: 200, outcome: 'success', requestId: reply.headers.get('x-service-request-id') });
      expect(entry.fields).to.deep.equal(['is_platform_admin']);
    }
  });

  // Was "the deleter's users:write key suffices": a users:write key deleted (and so demoted) a platform
  // admin, revoking every key and token of theirs, a power the spec keeps from management keys (the
  // platform-admin grant). A platform admin is deleted by the console or the CLI (deleteUser, as here),
  // or demoted by an admin token first; then the users family may delete the former admin.
  it("the owner's deletion revokes the key; a users:write key cannot delete or change a platform admin", async () => {
    const k = await buildPlatformKey(['plans:read']);
    const deleter = await buildPlatformKey(['users:write']);
    await works(k.key);
    for (const [method, json] of [['DELETE', undefined], ['PATCH', { name: 'Renamed' }], ['PATCH', { email: `taken-over-${k.id}@example.com` }]] as const) {
      const r = await adminCall(b.url, deleter.key, method, `/admin/v1/users/${k.owner.id}`, json);
      expect(r.status, `${method} ${JSON.stringify(json)}`).to.equal(403);
      expect(r.body.error.code).to.equal('platform_admin_protected');
    }
    // its own owner too
    expect((await adminCall(b.url, deleter.key, 'DELETE', `/admin/v1/users/${deleter.owner.id}`)).body.error.code).to.equal('platform_admin_protected');
    const owner = (await User.findByPk(k.owner.id))!;
    expect(owner).to.include({ deletedAt: null, isPlatformAdmin: true, email: k.owner.email, name: k.owner.name });
    await works(k.key);
    expect((await adminCall(a.url, deleter.key, 'GET', `/admin/v1/users/${deleter.owner.id}`)).body).to.include({ is_platform_admin: true });
    const refused = await waitFor(() => AuditLog.findOne({ where: { targetId: k.owner.id, method: 'DELETE' } }));
    expect(refused).to.include({ actorType: 'platform_key', status: 403, outcome: 'failure' });

    await deleteUser(owner, null); // the console's and the CLI's deletion
    await dead(k.key);
    expect((await PlatformKey.findByPk(k.id))!.revokedReason).to.equal('owner_deleted');
    expect((await adminCall(b.url, deleter.key, 'GET', `/admin/v1/users/${k.owner.id}`)).status).to.equal(404);

    // demoted by an admin token, the former admin is an ordinary user of the family
    const { token } = await buildAdminToken();
    const other = await buildPlatformAdmin();
    expect((await adminCall(a.url, token, 'PUT', `/admin/v1/users/${other.id}/platform-admin`, { is_platform_admin: false })).status).to.equal(200);
    const renamed = await adminCall(b.url, deleter.key, 'PATCH', `/admin/v1/users/${other.id}`, { name: 'Former admin' });
    expect(renamed.status, renamed.text).to.equal(200);
    expect(renamed.body).to.include({ name: 'Former admin', is_platform_admin: false });
    const gone = await adminCall(b.url, deleter.key, 'DELETE', `/admin/v1/users/${other.id}`);
    expect(gone.status, gone.text).to.equal(200);
    expect(gone.body).to.deep.equal({ id: other.id, object: 'user', deleted: true });
  });

  it("an admin token dies with its owner's demotion and stays dead after a re-grant; a new token works", async () => {
    const { token, owner } = await buildAdminToken();
    const other = await buildAdminToken();
    const tokenDead = async (t: string) => {
      for (const base of [a.url, b.url]) {
        const r = await adminCall(base, t, 'GET', '/admin/v1/platform-keys');
        expect(r.status, r.text).to.equal(401);
        expect(r.body.error.code).to.equal('invalid_admin_token');
      }
    };
    expect((await adminCall(a.url, token, 'GET', '/admin/v1/platform-keys')).status).to.equal(200);
    const demoted = await adminCall(a.url, other.token, 'PUT', `/admin/v1/users/${owner.id}/platform-admin`, { is_platform_admin: false });
    expect(demoted.status, demoted.text).to.equal(200);
    expect(demoted.body).to.include({ id: owner.id, is_platform_admin: false });
    await tokenDead(token);
    expect((await AdminToken.findOne({ where: { userId: owner.id } }))!.revokedReason).to.equal('owner_demoted');
    // re-granted: the old token does not come back (a demotion revokes it, as it does a management key)
    const regrant = await adminCall(b.url, other.token, 'PUT', `/admin/v1/users/${owner.id}/platform-admin`, { is_platform_admin: true });
    expect(regrant.status, regrant.text).to.equal(200);
    expect(regrant.body).to.include({ id: owner.id, is_platform_admin: true });
    await tokenDead(token);
    const fresh = await buildAdminToken((await User.findByPk(owner.id))!);
    for (const base of [a.url, b.url]) expect((await adminCall(base, fresh.token, 'GET', '/admin/v1/platform-keys')).status).to.equal(200);
  });

  it('creates a key through the API for a platform admin; the raw key is shown once', async () => {
    const { token, owner } = await buildAdminToken();
    const r = await adminCall(a.url, token, 'POST', '/admin/v1/platform-keys', { scopes: ['plans:read', 'stats:write'], name: 'ci' });
    expect(r.status, r.text).to.equal(201);
    expect(r.body.key).to.match(/^svc_platform_[0-9A-Za-z]{40}$/);
    expect(r.body).to.include({ user_id: owner.id, state: 'active' });
    await works(r.body.key);
    const listed = await adminCall(a.url, token, 'GET', '/admin/v1/platform-keys');
    expect(listed.text).not.to.include(r.body.key);
    const row = await PlatformKey.findByPk(r.body.id);
    expect(row!.keyHash).to.have.length(64).and.not.include(r.body.key);
    const entry = await waitFor(() => AuditLog.findOne({ where: { targetId: r.body.id, method: 'POST' } }));
    expect(JSON.stringify(entry)).not.to.include(r.body.key);
    const badScope = await adminCall(a.url, token, 'POST', '/admin/v1/platform-keys', { scopes: ['nope:read'] });
    expect(badScope.status).to.equal(400);
    const notAdmin = (await buildPlatformAdmin());
    await notAdmin.update({ isPlatformAdmin: false });
    const badOwner = await adminCall(a.url, token, 'POST', '/admin/v1/platform-keys', { scopes: ['plans:read'], user_id: notAdmin.id });
    expect(badOwner.status).to.equal(400);
    expect(badOwner.body.error.code).to.equal('invalid_owner');
  });

  it('an inference key never authenticates on the management API', async () => {
    const o = await buildOrg(env().redis);
    for (const [path, code] of [['/admin/v1/plans', 'invalid_platform_key'], ['/admin/v1/platform-keys', 'invalid_admin_token'], ['/admin/v1/users/00000000-0000-4000-8000-000000000000/impersonate', 'invalid_admin_token']]) {
      for (const method of ['GET', 'POST']) {
        const r = await adminCall(a.url, o.key, method, path, method === 'POST' ? {} : undefined);
        expect(r.status, `${method} ${path}`).to.equal(401);
        expect(r.body.error.code).to.equal(code);
        expect(r.body.error.message).to.match(/Inference API keys/);
        expect(r.text).not.to.include(o.key);
      }
    }
  });

  it('a management key or an admin token never authenticates on {base_url}', async () => {
    const k = await buildPlatformKey();
    const { token } = await buildAdminToken();
    for (const secret of [k.key, token]) {
      const variants: Array<Record<string, string>> = [{ authorization: `Bearer ${secret}` }, keyHeader(secret), { 'x-api-key': secret }];
      for (const headers of variants) {
        const r = await call('GET', '/v1/models', { headers });
        expect(r.status).to.equal(401);
        expect(r.body.error.code).to.equal('INVALID_API_KEY');
      }
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(secret), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'x' }] } });
      expect(r.status).to.equal(401);
      expect(r.body.error.code).to.equal('INVALID_API_KEY');
      expect(r.text).not.to.include(secret);
    }
  });
});
