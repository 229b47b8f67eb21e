import { expect } from 'chai';
import { routeFor } from '../../../api/dispatch/route';
import type { AppContext } from '../../../api/context';
import type { CatalogDeployment, CatalogModel, CatalogProvider } from '../../../shared/catalog/catalog';
import type { RouteStep } from '../../../shared/queues/payloads';
import { splitPrices, type StoredPrices } from '../../../shared/catalog/tier-prices';
import type { Model } from '../../../shared/db/models';
import { servedPriceMicros, type CostPrices } from '../../../shared/limits/usage-cost';
import { servedDelta } from '../../../workers/pools/service-tier';
import { audioMicros } from '../../../workers/pools/audio-price';

const provider: CatalogProvider = { id: 'p1', name: 'sim', kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1', settings: {}, passthrough: true };
const dep: CatalogDeployment = { name: 'd', provider, upstream: 'up', weight: 1, priority: 0, rpm: null, tpm: null, maxConcurrency: null };
/** A chat model whose prices are stored as the catalog file writes them (list, audio, `service_tiers`), read as the catalog reads them. */
function model(publicId: string, stored: StoredPrices, fallbacks: string[] = []): CatalogModel {
  const { prices, tierPrices } = splitPrices(stored);
  return {
    id: `id-${publicId}`, publicId, displayName: null, upstreamName: 'up', capabilities: { chat: true } as CatalogModel['capabilities'],
    contextWindow: null, maxOutputTokens: null, limits: {}, config: {}, prices, ...(tierPrices ? { tierPrices } : {}),
    tokenizer: 'o200k_base', createdAt: new Date(0), provider, deployments: [dep], fallbacks,
  };
}
const ctxWith = (models: CatalogModel[]) => ({ catalog: { get: async (id: string) => models.find((m) => m.publicId === id) } }) as unknown as AppContext;

/** 100 input tokens (30 of them audio), 60 output tokens (20 audio), as OpenAI reports them. */
const USAGE = { inputTokens: 100, outputTokens: 60 };
const reported = { usage: { prompt_tokens: 100, completion_tokens: 60, prompt_tokens_details: { audio_tokens: 30 }, completion_tokens_details: { audio_tokens: 20 } } };

/** What the worker bills an answer of USAGE served by `step` (on `servedTier`): the ledger's list price of the model asked for, plus the event's `cost_micros`. */
function billed(asked: CatalogModel, step: RouteStep, servedTier: string | undefined): number {
  const textDelta = servedDelta(step, servedTier);
  const list = USAGE.inputTokens * asked.prices.input_token + USAGE.outputTokens * asked.prices.output_token;
  return list + servedPriceMicros(USAGE, textDelta) + audioMicros(step, textDelta, USAGE, reported, undefined);
}

/**
 * The prices a chat step carries (api/dispatch/step-prices.ts) as the worker bills them
 * (workers/pools/service-tier.ts, audio-price.ts): text tokens at the served model's tier or list
 * price, audio tokens at its audio price whatever the tier, and the budget's hold (`heldPrices`) an
 * upper bound of every token's price on every step the request may be served by.
 */
describe('chat step prices: a priced tier and audio together', () => {
  const asked = model('asked', { input_token: 1, output_token: 2, audio_input_token: 16, audio_output_token: 32, service_tiers: { priority: { input_token: 3, output_token: 5 }, flex: { input_token: 0.5, output_token: 1 } } }, ['fb']);
  const fb = model('fb', { input_token: 2, output_token: 4, audio_input_token: 20, audio_output_token: 40, service_tiers: { priority: { input_token: 30, output_token: 50 } } });
  const body = { model: 'asked', messages: [{ role: 'user', content: 'x' }], service_tier: 'priority', modalities: ['text', 'audio'], audio: { voice: 'alloy' } };

  it('an answer served on the tier: text at the tier price, audio at the audio price, on the model asked for and on a fallback', async () => {
    const { route } = await routeFor(ctxWith([fb]), asked, body, 'chat', false, undefined, { output: 'modalities', input: 'messages[0].content[1]' });
    expect(route.map((s) => s.model)).to.deep.equal(['asked', 'fb']);
    const [a, f] = [asked, fb].map((m) => ({ tier: m.tierPrices!.priority, list: m.prices }));
    const cost = (text: CostPrices, m: CatalogModel) => 70 * text.input_token! + 30 * m.prices.audio_input_token + 40 * text.output_token! + 20 * m.prices.audio_output_token;
    expect(billed(asked, route[0], 'priority')).to.equal(cost(a.tier, asked));
    expect(billed(asked, route[1], 'priority')).to.equal(cost(f.tier, fb));
    // served on standard processing: the list price
    expect(billed(asked, route[0], 'default')).to.equal(cost(a.list, asked));
    expect(billed(asked, route[1], 'default')).to.equal(cost(f.list, fb));
  });

  it("the budget's hold is an upper bound: no step, on any tier it may be served on, bills a token above it", async () => {
    // a priced tier asked is served on it or on standard processing, `default` on standard processing (OpenAI's API document,
    // ServiceTier); none, `auto` or a tier the step's model does not price (not sent), on the project's tier: any
    for (const tier of [undefined, 'auto', 'default', 'priority', 'flex']) {
      const b = Object.assign({}, body, { service_tier: tier });
      const { route, heldPrices } = await routeFor(ctxWith([fb]), asked, b, 'chat', false, undefined, { output: 'modalities', input: 'messages[0].content[1]' });
      const bound = USAGE.inputTokens * heldPrices.input_token! + USAGE.outputTokens * heldPrices.output_token!;
      for (const step of route) {
        const sent = tier === 'default' ? [] : tier === undefined || tier === 'auto' || !step.tierPriceDeltas?.[tier] ? ['priority', 'flex', 'scale'] : [tier];
        for (const served of [...sent, 'default', undefined]) expect(billed(asked, step, served), `${tier} ${step.model} ${served}`).to.be.at.most(bound);
      }
    }
  });

  it('a request without a tier served on a priced tier is billed at it, and held at the dearest; `default` and a sent tier hold no dearer tier', async () => {
    const plainBody = { model: 'asked', messages: [{ role: 'user', content: 'x' }] };
    const { route, heldPrices } = await routeFor(ctxWith([fb]), asked, plainBody, 'chat', false);
    const text = (p: CostPrices) => USAGE.inputTokens * p.input_token! + USAGE.outputTokens * p.output_token!;
    expect(billed(asked, route[0], 'priority')).to.equal(text(asked.tierPrices!.priority));
    expect(billed(asked, route[1], 'priority')).to.equal(text(fb.tierPrices!.priority));
    expect(billed(asked, route[0], 'flex')).to.equal(text(asked.tierPrices!.flex));
    // a tier the model does not price, or none reported: the list price
    expect(billed(asked, route[1], 'flex')).to.equal(text(fb.prices));
    expect(billed(asked, route[0], 'scale')).to.equal(text(asked.prices));
    expect(billed(asked, route[0], 'constructor')).to.equal(text(asked.prices));
    expect(heldPrices).to.include({ input_token: 30, output_token: 50 });
    const pinned = await routeFor(ctxWith([]), asked, Object.assign({}, plainBody, { service_tier: 'default' }), 'chat', false);
    expect(pinned.heldPrices).to.include({ input_token: 1, output_token: 2 });
    const flex = await routeFor(ctxWith([]), asked, Object.assign({}, plainBody, { service_tier: 'flex' }), 'chat', false);
    expect(flex.heldPrices).to.include({ input_token: 1, output_token: 2 });
  });

  it("a model without tier prices, and a caller's own key, carry no tier prices: billed at the list price whatever the answer reports", async () => {
    const plain = model('plain', { input_token: 1, output_token: 2 });
    const plainBody = { model: 'plain', messages: [{ role: 'user', content: 'x' }] };
    const { route, heldPrices } = await routeFor(ctxWith([]), plain, plainBody, 'chat', false);
    expect(route[0]).not.to.have.property('tierPriceDeltas');
    expect(servedDelta(route[0], 'priority')).to.equal(undefined);
    expect(heldPrices).to.include({ input_token: 1, output_token: 2 });
    const own = await routeFor(ctxWith([]), asked, plainBody, 'chat', true);
    expect(own.route[0]).not.to.have.property('tierPriceDeltas');
    expect(own.heldPrices).to.include({ input_token: 1, output_token: 2 });
  });

  it('only the audio asked is priced: an output-only request carries no audio input difference and holds the list input price', async () => {
    const { route, heldPrices } = await routeFor(ctxWith([]), model('o', { input_token: 1, output_token: 2, audio_input_token: 16, audio_output_token: 32 }), body, 'chat', false, undefined, { output: 'audio' });
    expect(route[0].audioPriceDelta).to.deep.equal({ output_token: 30 });
    expect(heldPrices).to.include({ input_token: 1, output_token: 32 });
  });

  it('a step whose model is priced per web search call carries one call; a fallback without it, and a caller\'s own key, none; the hold is the dearest call', async () => {
    const searchy = model('s', { input_token: 1, output_token: 2, web_search_call: 25_000 }, ['plain', 'dear']);
    const plain = model('plain', { input_token: 1, output_token: 2 });
    const dear = model('dear', { input_token: 1, output_token: 2, web_search_call: 30_000 });
    const plainBody = { model: 's', messages: [{ role: 'user', content: 'x' }] };
    const { route, heldPrices, heldCallMicros } = await routeFor(ctxWith([plain, dear]), searchy, plainBody, 'chat', false);
    expect(route.map((s) => s.webSearchCallMicros)).to.deep.equal([25_000, undefined, 30_000]);
    expect(heldCallMicros).to.equal(30_000);
    // never a per-token price
    expect(heldPrices).to.deep.equal({ input_token: 1, output_token: 2, audio_second: 0 });
    expect(servedDelta(route[0], undefined)).to.equal(undefined);
    const own = await routeFor(ctxWith([]), searchy, plainBody, 'chat', true);
    expect(own.route[0]).not.to.have.property('webSearchCallMicros');
    expect(own.heldCallMicros).to.equal(0);
    const none = await routeFor(ctxWith([]), plain, plainBody, 'chat', false);
    expect(none.route[0]).not.to.have.property('webSearchCallMicros');
    expect(none.heldCallMicros).to.equal(0);
  });

  it("a model's stored prices are typed as stored: `service_tiers` an object, a unit's price read through splitPrices", () => {
    const stored: Model['prices'] = { input_token: 1, service_tiers: { priority: { input_token: 3, output_token: 5 } } };
    // @ts-expect-error a stored unit may be `service_tiers`' object: not a number until splitPrices
    const unit: number = stored.input_token;
    expect(unit).to.equal(1);
    expect(splitPrices(stored)).to.deep.equal({ prices: { input_token: 1 }, tierPrices: { priority: { input_token: 3, output_token: 5 } } });
  });
});
