import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { importCatalog } from '../../../shared/catalog/catalog-ops';
import { Model, Provider } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { endpointOf } from '../../../workers/providers/bedrock/api';

/** A bedrock provider in a catalog file: region required, base_url optional (the region's endpoint). */
describe('bedrock providers in the catalog file', () => {
  const model = { id: 'bedrock-cat-model', provider: 'bedrock-cat', upstream: 'amazon.nova-lite-v1:0', capabilities: { chat: true } };
  // Its upstream is AWS's real regional endpoint: later suites that call every catalog model must not see it.
  after(async () => {
    await Model.update({ enabled: false }, { where: { publicId: model.id } });
    await bumpEpoch(env().redis);
  });

  it('takes a bedrock provider without base_url, stores the region, and calls the regional endpoint', async () => {
    await importCatalog(env().redis, { providers: [{ name: 'bedrock-cat', kind: 'bedrock', region: 'ap-southeast-2', api_key: 'ABSKcatalogkey' }], models: [model] });
    const row = await Provider.findOne({ where: { name: 'bedrock-cat' } });
    expect(row!.settings).to.deep.equal({ region: 'ap-southeast-2' });
    expect(row!.apiKeyEncrypted).to.be.a('string').and.not.include('ABSKcatalogkey');
    const call = { baseUrl: row!.baseUrl, settings: row!.settings, upstreamModel: 'm', signal: new AbortController().signal, deadline: Date.now() + 1000 };
    expect(endpointOf(call)).to.equal('https://bedrock-runtime.ap-southeast-2.amazonaws.com');
  });

  it('refuses a bedrock provider without a region, and still requires base_url of other kinds', async () => {
    const failure = (doc: unknown) => importCatalog(env().redis, doc).then(() => '', (e: Error) => e.message);
    expect(await failure({ providers: [{ name: 'bedrock-noregion', kind: 'bedrock', api_key: 'k' }] })).to.include('"providers[0].region" is required');
    expect(await failure({ providers: [{ name: 'openai-nourl', kind: 'openai' }] })).to.include('"providers[0].base_url" is required');
    expect(await Provider.count({ where: { name: ['bedrock-noregion', 'openai-nourl'] } })).to.equal(0);
  });
});
