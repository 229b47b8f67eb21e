import { expect } from 'chai';
import { catalogFileSchema } from '../../../shared/catalog/catalog-ops';

/** The catalog file's model takes a price per web search call (docs/catalog.md "OpenAI's web search models"): a number, never negative. */
describe('catalog file: prices.web_search_call', () => {
  const file = (web_search_call: unknown) => ({ models: [{ id: 'gpt-4o-search-preview', provider: 'openai', upstream: 'gpt-4o-search-preview', capabilities: { chat: true }, prices: { input_token: 2.5, output_token: 10, web_search_call } }] });

  it('takes micro-dollars per call', () => {
    const { error, value } = catalogFileSchema.validate(file(25_000));
    expect(error).to.equal(undefined);
    expect(value.models[0].prices.web_search_call).to.equal(25_000);
  });

  it('refuses a negative price, or one that is not a number', () => {
    for (const bad of [-1, 'many', { per: 1000 }]) expect(catalogFileSchema.validate(file(bad)).error, String(bad)).not.to.equal(undefined);
  });
});
