import { expect } from 'chai';
import { jobRoute, routeFor } from '../../../api/dispatch/route';
import { routeOf, type RoutableJob } from '../../../workers/routing/route-request';
import type { AppContext } from '../../../api/context';
import type { CatalogDeployment, CatalogModel, CatalogProvider } from '../../../shared/catalog/catalog';
import type { UpstreamTarget } from '../../../shared/queues/payloads';

const provider: CatalogProvider = { id: 'p1', name: 'aws', kind: 'bedrock', baseUrl: 'http://127.0.0.1:9', settings: { region: 'us-east-1' } };
const other: CatalogProvider = { id: 'p2', name: 'sim', kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1', settings: {} };
const dep = (name: string, limits: Partial<CatalogDeployment> = {}): CatalogDeployment => ({ name, provider, upstream: 'arn:aws:bedrock:us-east-1:1:application-inference-profile/x', baseModel: 'anthropic.claude-opus-4-6-v1', weight: 3, priority: 2, rpm: null, tpm: null, maxConcurrency: null, ...limits });
const model = (deployments: CatalogDeployment[], fallbacks: string[] = []): CatalogModel => ({
  id: 'id-m', publicId: 'm', displayName: null, upstreamName: deployments[0].upstream, capabilities: { chat: true } as CatalogModel['capabilities'],
  contextWindow: null, maxOutputTokens: null, limits: {}, config: {}, prices: {}, tokenizer: 'o200k_base', createdAt: new Date(0),
  provider: deployments[0].provider, deployments, fallbacks,
});
const ctxWith = (models: CatalogModel[]) => ({ catalog: { get: async (id: string) => models.find((m) => m.publicId === id) } }) as unknown as AppContext;
const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
/** What the pod put in the job before (api/dispatch/target.ts targetOf): the model's first provider, no base model. */
const targetOf = (m: CatalogModel): UpstreamTarget => ({ providerId: m.provider.id, kind: m.provider.kind, baseUrl: m.provider.baseUrl, settings: m.provider.settings, upstreamModel: m.upstreamName, tokenizer: m.tokenizer });
/** The job as a worker reads it: through JSON, as BullMQ stores it. */
const job = (carried: object): RoutableJob => JSON.parse(JSON.stringify({ requestId: 'r', publicModel: 'alias-of-m', operation: 'chat', ...carried })) as RoutableJob;

describe('routing: a pool of one deployment is named in the job, not carried as a route', () => {
  it('a pool of one without limits goes as `pool` with its deployment as `target`, and the worker routes it as the full route', async () => {
    const m = model([dep('team-a')]);
    const { route } = await routeFor(ctxWith([]), m, body, 'chat', false);
    const carried = jobRoute(route, targetOf(m));
    expect(carried).to.have.property('pool').that.deep.equals({ id: 'id-m', model: 'm', name: 'team-a' });
    expect(carried).not.to.have.property('route');
    expect(carried.target.baseModel, 'the deployment’s base model goes with it').to.equal('anthropic.claude-opus-4-6-v1');
    expect(JSON.stringify(carried).length, 'shorter than the route it stands for').to.be.below(JSON.stringify({ target: targetOf(m), route }).length - 150);
    const [step] = routeOf(job(carried));
    const [full] = routeOf(job({ target: targetOf(m), route }));
    expect({ ...step, deployments: undefined }).to.deep.equal({ ...full, deployments: undefined });
    const { weight: _w, priority: _p, ...callAndLimits } = full.deployments[0];
    expect(step.deployments[0]).to.deep.include(callAndLimits);
  });

  it('a caller’s own upstream key goes with the deployment', async () => {
    const m = model([dep('team-a')]);
    const { route } = await routeFor(ctxWith([]), m, body, 'chat', true);
    route[0].deployments[0].sealedCallerKey = 'sealed';
    expect(routeOf(job(jobRoute(route, targetOf(m))))[0].deployments[0].sealedCallerKey).to.equal('sealed');
  });

  it('a pool with limits, of several deployments, or with fallbacks goes as its route', async () => {
    const fb = model([{ ...dep('f'), provider: other, baseModel: undefined }]);
    fb.publicId = 'fb';
    for (const m of [model([dep('a', { rpm: 5 })]), model([dep('a'), dep('b')]), model([dep('a')], ['fb'])]) {
      const { route } = await routeFor(ctxWith([fb]), m, body, 'chat', false);
      const carried = jobRoute(route, targetOf(m));
      expect(carried).not.to.have.property('pool');
      expect(carried.route).to.equal(route);
      expect(routeOf(job(carried))).to.deep.equal(JSON.parse(JSON.stringify(route)));
    }
  });

  it('a job with neither (enqueued by a pod of an older version) is a pool of one named `default` around its target', () => {
    const m = model([dep('team-a')]);
    const [step] = routeOf(job({ target: targetOf(m) }));
    expect(step).to.include({ poolId: 'p1', model: 'alias-of-m', fallback: false });
    expect(step.deployments[0]).to.include({ name: 'default', upstreamModel: m.upstreamName });
  });
});
