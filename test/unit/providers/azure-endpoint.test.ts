import { expect } from 'chai';
import { azureEndpoint } from '../../../workers/providers/azure/api';
import { presetRequest } from '../../../workers/providers/openai/preset';
import { PRESETS } from '../../../shared/catalog/presets';
import type { UpstreamCall } from '../../../workers/providers/types';

const call = (baseUrl: string, api_version?: string, upstreamModel = 'gpt-4o prod'): UpstreamCall => ({
  baseUrl,
  apiKey: 'k',
  upstreamModel,
  settings: api_version ? { api_version } : {},
  signal: new AbortController().signal,
  deadline: Date.now() + 1000,
});

describe('Azure OpenAI URLs (workers/providers/azure/api.ts)', () => {
  it('dated versions call the deployment (name escaped) with api-version; a trailing / or /openai is the same resource', () => {
    for (const base of ['https://r.openai.azure.com', 'https://r.openai.azure.com/', 'https://r.openai.azure.com/openai/']) {
      expect(azureEndpoint.url(call(base, '2024-10-21'), '/chat/completions')).to.equal('https://r.openai.azure.com/openai/deployments/gpt-4o%20prod/chat/completions?api-version=2024-10-21');
    }
  });

  it('v1 and preview call /openai/v1/ (preview with api-version=preview)', () => {
    expect(azureEndpoint.url(call('https://r.openai.azure.com', 'v1'), '/embeddings')).to.equal('https://r.openai.azure.com/openai/v1/embeddings');
    expect(azureEndpoint.url(call('https://r.openai.azure.com', 'preview'), '/chat/completions')).to.equal('https://r.openai.azure.com/openai/v1/chat/completions?api-version=preview');
  });

  it('refuses to call without an api_version, and sends the key as api-key only', () => {
    expect(() => azureEndpoint.url(call('https://r.openai.azure.com'), '/chat/completions')).to.throw(/api_version/);
    const h = azureEndpoint.headers(call('https://r', 'v1'));
    expect(h['api-key']).to.equal('k');
    expect(h).to.not.have.property('authorization');
    expect(azureEndpoint.headers(call('https://r', 'v1'), true)).to.not.have.property('content-type');
  });
});

describe('preset requests (workers/providers/openai/preset.ts)', () => {
  it('renames the output cap to the one the service reads, keeping an explicit one', () => {
    expect(presetRequest('mistral', PRESETS.mistral, { max_completion_tokens: 5 })).to.deep.equal({ max_tokens: 5 });
    expect(presetRequest('mistral', PRESETS.mistral, { max_completion_tokens: 5, max_tokens: 7 })).to.deep.equal({ max_tokens: 7 });
    expect(presetRequest('groq', PRESETS.groq, { max_completion_tokens: 5 })).to.deep.equal({ max_completion_tokens: 5 });
  });

  it("sends an input turn's reasoning under the service's field", () => {
    const out = presetRequest('openrouter', PRESETS.openrouter, { messages: [{ role: 'assistant', content: 'a', reasoning_content: 'r' }] });
    expect(out.messages).to.deep.equal([{ role: 'assistant', content: 'a', reasoning: 'r' }]);
    const same = presetRequest('deepseek', PRESETS.deepseek, { messages: [{ role: 'assistant', content: 'a', reasoning_content: 'r' }] });
    expect(same.messages).to.deep.equal([{ role: 'assistant', content: 'a', reasoning_content: 'r' }]);
  });
});
