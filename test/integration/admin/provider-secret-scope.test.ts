import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { adminSuite, buildPlatformKey } from '../../helpers/admin';
import { poolModel, rndId } from '../../helpers/pool-models';
import { upsertProvider, type ProviderInput } from '../../../shared/catalog/catalog-ops';
import { Provider } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';

/**
 * A provider's secret (its platform credential, or the key stored with it by the CLI or a catalog
 * file) is sent to its `base_url`. Secrets are write-only, and the platform credentials are a scope
 * family of their own, so a management key holding `providers:write` alone must not be able to point
 * a provider that holds one at a server of its choosing: that server would receive the secret.
 */
describe('management API: where a provider sends its secret is the platform-credentials scope’s', function () {
  this.timeout(30_000);
  const admin = adminSuite();
  const keys: Record<'providersOnly' | 'both', string> = { providersOnly: '', both: '' };
  before(async () => {
    keys.providersOnly = (await buildPlatformKey(['providers:write'])).key;
    keys.both = (await buildPlatformKey(['providers:write', 'platform-credentials:write'])).key;
  });
  beforeEach(resetSim);

  /** An openai provider on a dead loopback port, with a platform credential (or, `own`, a key stored with it). */
  async function providerWithSecret(own = false): Promise<{ id: string; name: string }> {
    const name = `sec-${rndId()}`;
    await upsertProvider({ name, kind: 'openai', base_url: 'http://127.0.0.1:9/v1', ...(own ? { api_key: 'sk-stored-with-provider' } : {}) } as ProviderInput);
    const id = (await Provider.findOne({ where: { name } }))!.id;
    if (!own) expect((await admin.call('POST', '/admin/v1/platform-credentials', { provider_id: id, secret: 'sk-platform-credential' })).status).to.equal(201);
    await bumpEpoch(env().redis);
    return { id, name };
  }

  it('providers:write alone cannot move a provider that holds a secret to another host (403 insufficient_scope naming platform-credentials:write); its secret never reaches that host', async () => {
    const o = await buildOrg(env().redis);
    for (const own of [false, true]) {
      const p = await providerWithSecret(own);
      const model = await poolModel([{ name: 'only', provider: p.name, upstream: `up-${rndId()}` }]);
      // the "attacker's" server: the simulator, which logs every Authorization it receives
      const moved = await admin.callAs(keys.providersOnly, 'PATCH', `/admin/v1/providers/${p.id}`, { base_url: `${env().simUrl}/v1` });
      await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages: [{ role: 'user', content: 'hi' }] } });
      expect(env().sim.log.entries.map((e) => e.authorization), 'no secret reached the new host').to.deep.equal([]);
      expect(moved.status, moved.text).to.equal(403);
      expect(moved.body.error.code).to.equal('insufficient_scope');
      expect(moved.headers.get('www-authenticate')).to.equal('Bearer error="insufficient_scope", scope="platform-credentials:write"');
      expect((await Provider.findByPk(p.id))!.baseUrl, 'unchanged').to.equal('http://127.0.0.1:9/v1');
      // the same host (another path) and the other fields stay the providers family's
      expect((await admin.callAs(keys.providersOnly, 'PATCH', `/admin/v1/providers/${p.id}`, { base_url: 'http://127.0.0.1:9/v2', passthrough: false })).status).to.equal(200);
      // with platform-credentials:write too, the move is taken
      const taken = await admin.callAs(keys.both, 'PATCH', `/admin/v1/providers/${p.id}`, { base_url: `${env().simUrl}/v1` });
      expect(taken.status, taken.text).to.equal(200);
    }
  });

  it('a provider with no secret moves with providers:write alone', async () => {
    const name = `nosec-${rndId()}`;
    await upsertProvider({ name, kind: 'openai', base_url: 'http://127.0.0.1:9/v1' } as ProviderInput);
    const id = (await Provider.findOne({ where: { name } }))!.id;
    const moved = await admin.callAs(keys.providersOnly, 'PATCH', `/admin/v1/providers/${id}`, { base_url: `${env().simUrl}/v1` });
    expect(moved.status, moved.text).to.equal(200);
  });
});
