/**
 * Where and how to call an Anthropic-native (messages) upstream. The provider's base URL is the
 * host root, as with ANTHROPIC_BASE_URL (`https://api.anthropic.com`); paths carry `/v1`.
 */
export const anthropicApi = {
  /** The version the adapter speaks to the upstream, whatever the caller sent. */
  version: '2023-06-01',
  url(baseUrl: string, path: string): string {
    return `${baseUrl.replace(/\/+$/, '')}${path}`;
  },
  headers(apiKey?: string): Record<string, string> {
    const h: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', 'anthropic-version': anthropicApi.version };
    if (apiKey) h['x-api-key'] = apiKey;
    return h;
  },
  paths: {
    messages: '/v1/messages',
  },
  /** Anthropic requires max_tokens; a canonical request without one gets this. */
  defaultMaxTokens: 4096,
};
