import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { adminSuite, buildPlatformKey } from '../../helpers/admin';
import { rndId } from '../../helpers/pool-models';
import type { Reply } from '../../helpers/http';
import { SearchProvider } from '../../../shared/db/models';

/**
 * A search provider's platform `api_key` and the organizations' own keys for it (stored under its
 * name) are sent to its `base_url`. Both are in the `search` family with the URL, so a management key
 * holding `search:write` alone must not point a provider that holds a key at a server of its choosing
 * (nor give the name the organizations' keys are stored under to a provider elsewhere): that server
 * would receive them. The same rule as a model provider's (provider-secret-scope.test.ts).
 */
describe('management API: where a search provider sends its keys is the platform-credentials scope’s', function () {
  this.timeout(30_000);
  const admin = adminSuite();
  const keys: Record<'searchOnly' | 'both', string> = { searchOnly: '', both: '' };
  before(async () => {
    keys.searchOnly = (await buildPlatformKey(['search:write'])).key;
    keys.both = (await buildPlatformKey(['search:write', 'platform-credentials:write'])).key;
  });
  const HOME = 'http://127.0.0.1:9/brave';

  /** A brave provider on a dead loopback port, holding a platform key or (`orgKey`) an organization's own key. */
  async function searchProvider(secret: 'platform' | 'orgKey' | 'none'): Promise<{ id: string; name: string }> {
    const name = `sp-${rndId()}`;
    const made = await admin.call('POST', '/admin/v1/search-providers', { name, kind: 'brave', base_url: HOME, ...(secret === 'platform' ? { api_key: 'sk-search-platform' } : {}) });
    expect(made.status, made.text).to.equal(201);
    if (secret === 'orgKey') await ownKey(name);
    return { id: made.body.id, name };
  }
  async function ownKey(provider: string): Promise<void> {
    const { org } = await buildOrg(env().redis);
    const put = await admin.callAs(keys.searchOnly, 'PUT', `/admin/v1/search-settings/orgs/${org.id}/keys/${provider}`, { api_key: 'sk-org-own-search-key' });
    expect(put.status, put.text).to.equal(200);
  }
  function expectRefused(r: Reply): void {
    expect(r.status, r.text).to.equal(403);
    expect(r.body.error.code).to.equal('insufficient_scope');
    expect(r.headers.get('www-authenticate')).to.equal('Bearer error="insufficient_scope", scope="platform-credentials:write"');
  }

  it('search:write alone cannot move a search provider holding its platform key or an organization’s own key to another origin; the same origin, other fields and both scopes can', async () => {
    for (const secret of ['platform', 'orgKey'] as const) {
      const p = await searchProvider(secret);
      for (const elsewhere of [`${env().simUrl}/brave`, 'https://127.0.0.1:9/brave', 'http://127.0.0.1:10/brave', 'http://localhost:9/brave']) {
        expectRefused(await admin.callAs(keys.searchOnly, 'PATCH', `/admin/v1/search-providers/${p.id}`, { base_url: elsewhere, price_micros: 1 }));
      }
      const row = (await SearchProvider.findByPk(p.id))!;
      expect(row.baseUrl, 'unchanged').to.equal(HOME);
      expect(Number(row.priceMicros), 'nothing changed').not.to.equal(1);
      const same = await admin.callAs(keys.searchOnly, 'PATCH', `/admin/v1/search-providers/${p.id}`, { base_url: 'http://127.0.0.1:9/brave/v2', price_micros: 7, enabled: false });
      expect(same.status, same.text).to.equal(200);
      const taken = await admin.callAs(keys.both, 'PATCH', `/admin/v1/search-providers/${p.id}`, { base_url: `${env().simUrl}/brave` });
      expect(taken.status, taken.text).to.equal(200);
    }
  });

  it('the name organizations’ own keys are stored under is not handed to a provider elsewhere with search:write alone (a create or a rename)', async () => {
    const p = await searchProvider('orgKey');
    // renamed away on the same origin: its keys' name now resolves to no provider, nothing is sent
    const renamed = await admin.callAs(keys.searchOnly, 'PATCH', `/admin/v1/search-providers/${p.id}`, { name: `${p.name}-old` });
    expect(renamed.status, renamed.text).to.equal(200);
    expectRefused(await admin.callAs(keys.searchOnly, 'POST', '/admin/v1/search-providers', { name: p.name, kind: 'brave', base_url: `${env().simUrl}/brave` }));
    const other = await searchProvider('none');
    await admin.callAs(keys.searchOnly, 'PATCH', `/admin/v1/search-providers/${other.id}`, { base_url: `${env().simUrl}/brave` });
    expectRefused(await admin.callAs(keys.searchOnly, 'PATCH', `/admin/v1/search-providers/${other.id}`, { name: p.name }));
    expect(await SearchProvider.count({ where: { name: p.name } }), 'nothing took the name').to.equal(0);
    // the name's keys go nowhere now: giving it to any provider, its first one included, sends them somewhere
    expectRefused(await admin.callAs(keys.searchOnly, 'PATCH', `/admin/v1/search-providers/${p.id}`, { name: p.name }));
    const back = await admin.callAs(keys.both, 'PATCH', `/admin/v1/search-providers/${p.id}`, { name: p.name });
    expect(back.status, back.text).to.equal(200);
    // a rename with no own keys under the new name is the search family's
    const free = await admin.callAs(keys.searchOnly, 'PATCH', `/admin/v1/search-providers/${other.id}`, { name: `${other.name}-x` });
    expect(free.status, free.text).to.equal(200);
  });

  it('a search provider holding no key moves with search:write alone; so does one whose platform key the same write replaces', async () => {
    const none = await searchProvider('none');
    const moved = await admin.callAs(keys.searchOnly, 'PATCH', `/admin/v1/search-providers/${none.id}`, { base_url: `${env().simUrl}/brave` });
    expect(moved.status, moved.text).to.equal(200);
    const platform = await searchProvider('platform');
    const replaced = await admin.callAs(keys.searchOnly, 'PATCH', `/admin/v1/search-providers/${platform.id}`, { base_url: `${env().simUrl}/brave`, api_key: 'sk-the-callers-own' });
    expect(replaced.status, replaced.text).to.equal(200);
  });
});
