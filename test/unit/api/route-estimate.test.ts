import { expect } from 'chai';
import { routeFor } from '../../../api/dispatch/route';
import type { AppContext } from '../../../api/context';
import type { CatalogDeployment, CatalogModel, CatalogProvider } from '../../../shared/catalog/catalog';

const provider: CatalogProvider = { id: 'p1', name: 'sim', kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1', settings: {}, passthrough: true };
const dep = (name: string, limits: Partial<CatalogDeployment> = {}): CatalogDeployment => ({ name, provider, upstream: 'up', weight: 1, priority: 0, rpm: null, tpm: null, maxConcurrency: null, ...limits });
const model = (publicId: string, deployments: CatalogDeployment[], extra: Partial<CatalogModel> = {}): CatalogModel => ({
  id: `id-${publicId}`,
  publicId,
  displayName: null,
  upstreamName: 'up',
  capabilities: { chat: true } as CatalogModel['capabilities'],
  contextWindow: null,
  maxOutputTokens: null,
  limits: {},
  config: {},
  prices: {},
  tokenizer: 'o200k_base',
  createdAt: new Date(0),
  provider,
  deployments,
  fallbacks: [],
  ...extra,
});
/** Only the catalog is read, and only for fallbacks. */
const ctxWith = (models: CatalogModel[]) => ({ catalog: { get: async (id: string) => models.find((m) => m.publicId === id) } }) as unknown as AppContext;
const body = { model: 'm', messages: [{ role: 'user', content: 'x'.repeat(400) }], max_tokens: 50 };

describe('routing: the request estimate goes with the job only where a pick counts tokens', () => {
  it('a pool of one without limits carries no estimate (its messages are not serialised for it)', async () => {
    const r = await routeFor(ctxWith([]), model('m', [dep('only')]), body, 'chat', false);
    expect(r.route).to.have.length(1);
    expect(r.estimatedTokens).to.equal(0);
  });

  it('a pool with limits, or of several deployments, carries the estimate: input about 4 characters a token plus the output asked for', async () => {
    for (const deployments of [[dep('only', { tpm: 1000 })], [dep('only', { rpm: 5 })], [dep('a'), dep('b')]]) {
      const r = await routeFor(ctxWith([]), model('m', deployments), body, 'chat', false);
      expect(r.estimatedTokens).to.be.within(150, 170); // ~420 characters of messages / 4 + 50
    }
  });

  it('a request longer than the model’s context window still goes to a fallback whose window fits, estimate included', async () => {
    const big = model('big', [dep('b')], { contextWindow: 100_000 });
    const r = await routeFor(ctxWith([big]), model('m', [dep('only')], { contextWindow: 100, fallbacks: ['big'] }), body, 'chat', false);
    expect(r.route.map((s) => s.model)).to.deep.equal(['big']);
    expect(r.estimatedTokens).to.equal(0); // the fallback is a limitless pool of one: nothing counts it
    const fits = await routeFor(ctxWith([big]), model('m', [dep('only')], { contextWindow: 10_000, fallbacks: ['big'] }), body, 'chat', false);
    expect(fits.route.map((s) => s.model)).to.deep.equal(['m', 'big']);
  });
});
