/**
 * Where and how to call a Cohere-compatible rerank upstream (Cohere v2; vLLM's `/v2/rerank` speaks
 * the same shape). The provider's base URL is the host root (`https://api.cohere.com`).
 */
export const cohereApi = {
  url(baseUrl: string, path: string): string {
    return `${baseUrl.replace(/\/+$/, '')}${path}`;
  },
  headers(apiKey?: string): Record<string, string> {
    const h: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (apiKey) h.authorization = `Bearer ${apiKey}`;
    return h;
  },
  paths: {
    rerank: '/v2/rerank',
  },
};
