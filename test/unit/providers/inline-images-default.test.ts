import { expect } from 'chai';
import { inlineImageUrlsDefault } from '../../../shared/catalog/inline-images';
import { sniffImageType } from '../../../workers/providers/inline-images';
import { deploymentSchema } from '../../../shared/catalog/deployments';

/**
 * Which deployments get a request's image URLs as data URLs by default (docs/providers.md, *Image
 * URLs and self-hosted servers*): a server the operator runs would fetch a URL from inside its network.
 */
describe('inline_image_urls default (shared/catalog/inline-images.ts)', () => {
  it('is on for a server the operator runs: an openai or anthropic provider off a vendor host, or a self-hosted preset', () => {
    for (const p of [
      { kind: 'openai', baseUrl: 'http://vllm.internal:8000/v1' },
      { kind: 'openai', baseUrl: 'http://10.0.0.5:8000/v1' },
      { kind: 'openai', baseUrl: 'https://tgi.example.net/v1' },
      { kind: 'openai', baseUrl: 'http://localhost:11434/v1', settings: { preset: 'ollama' } },
      // a self-hosted preset on any host, even one that looks like a vendor's
      { kind: 'openai', baseUrl: 'https://api.openai.com/v1', settings: { preset: 'vllm' } },
      // plain http to a vendor's name is not the vendor's service
      { kind: 'openai', baseUrl: 'http://api.openai.com/v1' },
      { kind: 'anthropic', baseUrl: 'http://claude-proxy.internal' },
    ]) {
      expect(inlineImageUrlsDefault(p as never), JSON.stringify(p)).to.equal(true);
    }
  });

  it("is off for the vendors' APIs, which fetch from their own clouds, and for kinds that take no image URL", () => {
    for (const p of [
      { kind: 'openai', baseUrl: 'https://api.openai.com/v1' },
      { kind: 'openai', baseUrl: 'https://api.groq.com/openai/v1', settings: { preset: 'groq' } },
      { kind: 'openai', baseUrl: 'https://openrouter.ai/api/v1', settings: { preset: 'openrouter' } },
      { kind: 'anthropic', baseUrl: 'https://api.anthropic.com' },
      { kind: 'azure', baseUrl: 'https://x.openai.azure.com' },
      { kind: 'azure', baseUrl: 'http://apim.internal' },
      { kind: 'gemini', baseUrl: 'http://127.0.0.1:9999' },
      { kind: 'bedrock', baseUrl: '' },
      { kind: 'cohere', baseUrl: 'http://127.0.0.1:9999' },
    ]) {
      expect(inlineImageUrlsDefault(p as never), JSON.stringify(p)).to.equal(false);
    }
  });

  it('a deployment may say either way; anything but a boolean is refused', () => {
    const d = { name: 'a', provider: 'p', upstream: 'm' };
    expect(deploymentSchema.validate(Object.assign({}, d, { inline_image_urls: false })).error).to.equal(undefined);
    expect(deploymentSchema.validate(Object.assign({}, d, { inline_image_urls: true })).error).to.equal(undefined);
    expect(deploymentSchema.validate(Object.assign({}, d, { inline_image_urls: 'yes please' })).error).to.not.equal(undefined);
  });

  it('judges downloaded bytes by their signature, not their Content-Type', () => {
    expect(sniffImageType(Buffer.from('89504e470d0a1a0a0000', 'hex'))).to.equal('image/png');
    expect(sniffImageType(Buffer.from('ffd8ffe000104a464946', 'hex'))).to.equal('image/jpeg');
    expect(sniffImageType(Buffer.from('GIF89a\x01\x00', 'latin1'))).to.equal('image/gif');
    expect(sniffImageType(Buffer.from('RIFF\x00\x00\x00\x00WEBPVP8 ', 'latin1'))).to.equal('image/webp');
    expect(sniffImageType(Buffer.from('<html>not an image</html>'))).to.equal(undefined);
    expect(sniffImageType(Buffer.alloc(0))).to.equal(undefined);
  });
});
