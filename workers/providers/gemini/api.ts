/**
 * Where and how to call the Gemini API (generativelanguage). The provider's base URL is the host
 * root (`https://generativelanguage.googleapis.com`); paths carry `/v1beta`. The key goes in
 * `x-goog-api-key`, never in the query.
 */
export type GeminiMethod = 'generateContent' | 'streamGenerateContent' | 'batchEmbedContents';

export const geminiApi = {
  version: 'v1beta',
  url(baseUrl: string, upstreamModel: string, method: GeminiMethod): string {
    const root = baseUrl.replace(/\/+$/, '').replace(/\/v1beta$/, '');
    const url = `${root}/${geminiApi.version}/${geminiApi.modelName(upstreamModel)}:${method}`;
    return method === 'streamGenerateContent' ? `${url}?alt=sse` : url;
  },
  /** `models/{name}` (the resource name the API expects, also inside batch embedding requests). */
  modelName(upstreamModel: string): string {
    const m = upstreamModel.replace(/^models\//, '');
    return `models/${m.split('/').map(encodeURIComponent).join('/')}`;
  },
  headers(apiKey?: string): Record<string, string> {
    const h: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (apiKey) h['x-goog-api-key'] = apiKey;
    return h;
  },
};
