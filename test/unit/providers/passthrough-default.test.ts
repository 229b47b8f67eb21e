import { expect } from 'chai';
import { passthroughAllowed, vendorHosted } from '../../../shared/catalog/passthrough';

/** Which providers take callers' own keys when their `passthrough` is not set (docs/providers.md). */
describe("passthrough's default: a vendor's own https host only", () => {
  it("vendors' hosts and their subdomains, over https", () => {
    for (const u of ['https://api.openai.com/v1', 'https://API.Anthropic.com', 'https://res-1.openai.azure.com', 'https://bedrock-runtime.eu-west-1.amazonaws.com',
      'https://generativelanguage.googleapis.com', 'https://api.cohere.com', 'https://api.groq.com/openai/v1', 'https://openrouter.ai/api/v1']) {
      expect(vendorHosted(u), u).to.equal(true);
    }
  });

  it('anything else: plain http, look-alike hosts, addresses, a server of the operator\'s, no URL', () => {
    for (const u of ['http://api.openai.com/v1', 'https://api.openai.com.evil.example/v1', 'https://evilapi.openai.com.example', 'https://notapi.openai.com',
      'https://10.0.0.5/v1', 'https://llm.internal/v1', 'http://localhost:11434/v1', '', 'not a url', null, undefined]) {
      expect(vendorHosted(u), String(u)).to.equal(false);
    }
  });

  it('the setting wins; a self-hosted preset is refused even on a vendor-looking host; bedrock at its region\'s endpoint is allowed', () => {
    expect(passthroughAllowed({ baseUrl: 'http://10.0.0.5/v1', passthrough: true })).to.equal(true);
    expect(passthroughAllowed({ baseUrl: 'https://api.openai.com/v1', passthrough: false })).to.equal(false);
    expect(passthroughAllowed({ baseUrl: 'https://api.openai.com/v1', passthrough: null })).to.equal(true);
    expect(passthroughAllowed({ baseUrl: 'https://api.openai.com/v1', settings: { preset: 'vllm' } })).to.equal(false);
    expect(passthroughAllowed({ kind: 'bedrock', baseUrl: '' })).to.equal(true);
    expect(passthroughAllowed({ kind: 'openai', baseUrl: '' })).to.equal(false);
  });
});
