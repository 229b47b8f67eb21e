/** Where and how to call an OpenAI-compatible upstream (OpenAI, vLLM, Ollama, llama.cpp, TGI). */
export const openaiApi = {
  url(baseUrl: string, path: string): string {
    return `${baseUrl.replace(/\/+$/, '')}${path}`;
  },
  headers(apiKey?: string): Record<string, string> {
    const h: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (apiKey) h.authorization = `Bearer ${apiKey}`;
    return h;
  },
  /** Headers for a multipart upload: fetch sets the content type with its boundary. */
  uploadHeaders(apiKey?: string): Record<string, string> {
    const h: Record<string, string> = { accept: 'application/json' };
    if (apiKey) h.authorization = `Bearer ${apiKey}`;
    return h;
  },
  paths: {
    chat: '/chat/completions',
    completions: '/completions',
    embeddings: '/embeddings',
    images: '/images/generations',
    imageEdits: '/images/edits',
    transcriptions: '/audio/transcriptions',
  },
};
