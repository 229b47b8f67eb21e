import { expect } from 'chai';
import { originAndPath } from '../../../workers/providers/http';

/** What undici's `request(url)` would send: the URL parser's origin, and its path and query. */
function parsed(url: string): { origin: string; path: string } {
  const u = new URL(url);
  return { origin: u.origin, path: `${u.pathname}${u.search}` };
}

describe('originAndPath (the upstream URL as undici’s dispatcher takes it)', () => {
  const urls = [
    'http://127.0.0.1:8080/v1/chat/completions',
    'https://api.openai.com/v1/chat/completions',
    'https://API.Example.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21',
    'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse',
    'https://host.example/base%20path/v1/embeddings',
    'https://user:secret@host.example/v1/chat/completions',
    'https://host.example/a b/v1/chat/completions',
    'https://host.example/v1/../v2/chat/completions',
    'https://host.example/v1/./chat',
    'http://[::1]:9000/v1/chat/completions',
    'https://host.example/v1/chat#frag',
    'https://host.example',
    'https://host.example:443/v1/chat/completions',
    'http://host.example:80/v1/chat/completions',
    'http://host.example:8443/v1/chat/completions',
  ];
  for (const url of urls) {
    it(`splits ${url} as the URL parser does`, () => {
      expect(originAndPath(url)).to.deep.equal(parsed(url));
    });
  }
});
