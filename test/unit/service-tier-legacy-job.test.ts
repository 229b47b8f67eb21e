import { expect } from 'chai';
import type { ChatJob, RouteStep, UpstreamTarget } from '../../shared/queues/payloads';
import { servedDelta, withLegacyTierDelta, withTierSent } from '../../workers/pools/service-tier';

const target = { providerId: 'p1', kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1' } as UpstreamTarget;
const PRIORITY = { input_token: 2, output_token: 3 };
const FB_PRIORITY = { input_token: 20, output_token: 30 };
const FB_LIST = { input_token: 1, output_token: 2 };

/** A step as a web pod wrote it: `tierPriceDelta` (before tierPriceDeltas) or the per-tier ones. */
const step = (model: string, extra: Partial<RouteStep> = {}): RouteStep => Object.assign({ poolId: `id-${model}`, model, fallback: model !== 'asked', deployments: [] }, extra);
const job = (service_tier: unknown, route: RouteStep[] | undefined): ChatJob =>
  ({ operation: 'chat', target, body: { model: 'asked', messages: [], service_tier }, includeUsage: true, route }) as unknown as ChatJob;

/**
 * A rolling deploy: a job an older web pod enqueued carries on each step whose model prices the tier
 * asked that tier's difference alone (`tierPriceDelta`); the worker reads it as the per-tier
 * differences of the tier asked (workers/pools/service-tier.ts withLegacyTierDelta), so the tier is
 * sent and an answer served on it billed at its price, as the older worker did.
 */
describe('worker: a job from an older web pod (tierPriceDelta)', () => {
  it('the tier asked is sent and an answer served on it billed at its difference; another tier or default at the list price', () => {
    for (const asked of ['priority', 'fast']) {
      const old = job(asked, [step('asked', { tierPriceDelta: PRIORITY }), step('fb', { priceDelta: FB_LIST, tierPriceDelta: FB_PRIORITY })]);
      const j = withLegacyTierDelta(old);
      const [a, fb] = j.route!;
      expect(a.tierPriceDeltas).to.deep.equal({ priority: PRIORITY });
      expect(withTierSent(j, target, a).body.service_tier, 'sent as asked').to.equal(asked);
      expect(withTierSent(j, target, fb).body.service_tier).to.equal(asked);
      expect(servedDelta(a, 'priority')).to.equal(PRIORITY);
      expect(servedDelta(fb, 'priority')).to.equal(FB_PRIORITY);
      // not the tier asked: the list price (a fallback's difference), as before
      for (const served of ['default', 'flex', undefined]) {
        expect(servedDelta(a, served), String(served)).to.equal(undefined);
        expect(servedDelta(fb, served), String(served)).to.equal(FB_LIST);
      }
      // the older pod's job itself is not changed
      expect(old.route![0]).not.to.have.property('tierPriceDeltas');
    }
  });

  it("a flex asked is read as flex's difference; a step without one (its model does not price the tier) goes without the tier", () => {
    const j = withLegacyTierDelta(job('flex', [step('asked', { tierPriceDelta: {} }), step('fb')]));
    expect(j.route![0].tierPriceDeltas).to.deep.equal({ flex: {} });
    expect(servedDelta(j.route![0], 'flex')).to.deep.equal({});
    expect(withTierSent(j, target, j.route![0]).body.service_tier).to.equal('flex');
    expect(j.route![1]).not.to.have.property('tierPriceDeltas');
    expect(withTierSent(j, target, j.route![1]).body).not.to.have.property('service_tier');
  });

  it("without the reading the older pod's job would go without its tier and be billed at the list price", () => {
    const old = job('priority', [step('asked', { tierPriceDelta: PRIORITY })]);
    expect(withTierSent(old, target, old.route![0]).body).not.to.have.property('service_tier');
    expect(servedDelta(old.route![0], 'priority')).to.equal(undefined);
  });

  it("a current pod's job, and one asking no priced tier, are returned as they are", () => {
    const current = job('priority', [step('asked', { tierPriceDeltas: { priority: PRIORITY } })]);
    expect(withLegacyTierDelta(current)).to.equal(current);
    for (const t of [undefined, null, 'auto', 'default']) {
      const none = job(t, [step('asked', { tierPriceDelta: PRIORITY })]);
      expect(withLegacyTierDelta(none), String(t)).to.equal(none);
    }
    const noRoute = job('priority', undefined);
    expect(withLegacyTierDelta(noRoute)).to.equal(noRoute);
  });
});
