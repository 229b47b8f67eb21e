import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { keys } from '../../../shared/redis/keys';
import { buildOrg } from '../../helpers/factories';
import { buildWebMember, consoleAs, dashboardAs } from '../../helpers/web-client';
import { startAdmin } from '../../helpers/admin';
import { ApiKey, InviteCode, Organization, PlatformKey, User } from '../../../shared/db/models';
import { call, keyHeader } from '../../helpers/http';

const onceOf = (html: string, action: string) => {
  const form = html.slice(html.indexOf(`action="${action}"`));
  return /name="_once" value="([^"]+)"/.exec(form)?.[1] ?? '';
};
const newKeyOf = (html: string) => /data-test="new-key">([^<]+)</.exec(html)?.[1] ?? '';

/**
 * Reloading the page a key form answered sends the same form again (the browser re-posts it): the
 * dashboard makes no second key and rotates no second time; it says what happened.
 */
describe('dashboard: a key form sent again by a reload makes nothing', () => {
  it('create: the reload is 409 with a notice and one key exists; a fresh form makes another', async () => {
    const o = await buildOrg(env().redis);
    const web = await dashboardAs(await buildWebMember(o.org.id, 'member'));
    const path = `/dashboard/o/${o.org.slug}/keys`;
    const page = await web.get(path);
    const form = { name: 'reloaded', _once: onceOf(page.text, path) };
    expect(form._once).to.match(/^[A-Za-z0-9_-]{22}$/);
    const made = await web.post(path, form);
    expect(made.status).to.equal(201);
    expect(newKeyOf(made.text)).to.not.equal('');
    expect(made.text).to.include('<div class="card" role="status"><p><strong>Your new key.</strong>'); // read out when the page opens
    const again = await web.post(path, form);
    expect(again.status).to.equal(409);
    expect(again.text).to.include('data-test="resent"');
    expect(newKeyOf(again.text)).to.equal('');
    expect(await ApiKey.count({ where: { orgId: o.org.id, name: 'reloaded' } })).to.equal(1);
    // the page drawn after the reload carries a new token: sending that form makes a second key
    const second = await web.post(path, { name: 'reloaded', _once: onceOf(again.text, path) });
    expect(second.status).to.equal(201);
    expect(await ApiKey.count({ where: { orgId: o.org.id, name: 'reloaded' } })).to.equal(2);
  });

  it('a refused create forgets its token: the same form, mended, still makes the key', async () => {
    const o = await buildOrg(env().redis);
    const web = await dashboardAs(await buildWebMember(o.org.id, 'member'));
    const path = `/dashboard/o/${o.org.slug}/keys`;
    const token = onceOf((await web.get(path)).text, path);
    const refused = await web.post(path, { name: 'mended', project: '00000000-0000-4000-8000-000000000000', _once: token });
    expect(refused.status).to.equal(400);
    const made = await web.post(path, { name: 'mended', _once: token });
    expect(made.status).to.equal(201);
    expect(await ApiKey.count({ where: { orgId: o.org.id, name: 'mended' } })).to.equal(1);
  });

  it('rotate: the reload does not rotate again, so the secret shown first keeps working', async () => {
    const o = await buildOrg(env().redis);
    const web = await dashboardAs(await buildWebMember(o.org.id, 'owner'));
    const path = `/dashboard/o/${o.org.slug}/keys`;
    const action = `${path}/${o.keyId}/rotate`;
    const form = { grace_seconds: '0', _once: onceOf((await web.get(path)).text, action) };
    const rotated = await web.post(action, form);
    expect(rotated.status).to.equal(200);
    const secret = newKeyOf(rotated.text);
    expect(secret).to.not.equal('');
    const name = (await ApiKey.findByPk(o.keyId))!.prefix; // the factory's key has no name
    expect(rotated.text).to.include(`New secret for ${name}.`); // which key the secret is for
    const again = await web.post(action, form);
    expect(again.status).to.equal(409);
    expect(again.text).to.include('data-test="resent"');
    // it says the key was not rotated again, not that no key was made
    expect(again.text).to.include(`<strong>${name}</strong> was not rotated again`).and.not.include('no other key was made');
    const r = await call('GET', '/v1/models', { headers: keyHeader(secret) });
    expect(r.status, r.text).to.equal(200);
  });

  it('invite: the reload makes and mails no second invitation', async () => {
    const o = await buildOrg(env().redis);
    const web = await dashboardAs(await buildWebMember(o.org.id, 'owner'));
    const b = `/dashboard/o/${o.org.slug}/members`;
    const form = { email: `resent-${o.org.id.slice(0, 8)}@example.com`, role: 'member', _once: onceOf((await web.get(b)).text, `${b}/invitations`) };
    expect((await web.post(`${b}/invitations`, form)).status).to.equal(201);
    const again = await web.post(`${b}/invitations`, form);
    expect(again.status).to.equal(409);
    expect(again.text).to.include('already sent');
    expect(await InviteCode.count({ where: { orgId: o.org.id } })).to.equal(1);
    expect(await env().redis.get(keys.invitationsMade(o.org.id)), 'the reload is not counted toward the hourly limit').to.equal('1');
  });

  it('console: a reloaded management key form makes no second key', async () => {
    const admin = await startAdmin();
    try {
      const op = await consoleAs(admin.url);
      const name = `resent-${Date.now()}`;
      const form = { name, scopes: 'stats:read', _once: onceOf((await op.get('/keys')).text, '/keys') };
      const made = await op.post('/keys', form);
      expect(made.status).to.equal(201);
      expect(made.text).to.include('<div class="card" role="status"><p><strong>New management key.</strong>'); // read out when the page opens
      const again = await op.post('/keys', form);
      expect(again.status).to.equal(409);
      expect(again.text).to.include('data-test="resent"').and.not.include('data-test="new-platform-key"');
      expect(await PlatformKey.count({ where: { name } })).to.equal(1);
    } finally {
      await admin.close();
    }
  });

  it('console create page: a reload of an invitation, a user or an organization it answered makes (and mails) nothing again: 409 with a notice', async () => {
    const admin = await startAdmin();
    try {
      const op = await consoleAs(admin.url);
      const o = await buildOrg(env().redis);
      const tag = o.org.id.slice(0, 8);
      const sends: Array<[string, Record<string, string>, () => Promise<number>]> = [
        ['/create/invitation', { org: o.org.slug, email: `c-resent-${tag}@example.com`, role: 'member' }, () => InviteCode.count({ where: { orgId: o.org.id } })],
        ['/create/user', { email: `u-resent-${tag}@example.com` }, () => User.count({ where: { email: `u-resent-${tag}@example.com` } })],
        ['/create/org', { name: `Resent ${tag}`, slug: `resent-${tag}` }, () => Organization.count({ where: { slug: `resent-${tag}` } })],
      ];
      for (const [action, fields, made] of sends) {
        const form = { ...fields, _once: onceOf((await op.get('/create')).text, action) };
        expect(form._once, action).to.match(/^[A-Za-z0-9_-]{22}$/);
        expect((await op.post(action, form)).status, action).to.equal(201);
        const again = await op.post(action, form);
        expect(again.status, action).to.equal(409);
        expect(again.text, action).to.include('This form was already sent (the page was reloaded)').and.not.include('data-test="field-error');
        expect(await made(), action).to.equal(1);
      }
    } finally {
      await admin.close();
    }
  });
});
