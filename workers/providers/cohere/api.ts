import { openaiApi } from '../openai/api';

/**
 * Where and how to call a Cohere-compatible upstream: rerank (Cohere v2; vLLM's `/v2/rerank` speaks
 * the same shape) and embed (Cohere v2). The provider's base URL is the host root (`https://api.cohere.com`).
 */
export const cohereApi = {
  // Same URL joining and bearer JSON headers as the OpenAI-compatible base; only the paths differ.
  url: openaiApi.url,
  headers: openaiApi.headers,
  paths: {
    rerank: '/v2/rerank',
    embed: '/v2/embed',
  },
};
