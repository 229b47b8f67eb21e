import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { runSearch, type SearchCaller, MAX_QUERY_CHARS } from '../../dispatch/search';
import { errors } from '../../../shared/errors/codes';

export const WEB_SEARCH_TOOL: Tool = {
  name: 'web_search',
  title: 'Web search',
  description: "Searches the web through the organization's search provider and returns ranked results (title, url, snippet, published_date, score).",
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string', minLength: 1, maxLength: MAX_QUERY_CHARS, description: `The search query, 1-${MAX_QUERY_CHARS} characters.` },
      provider: { type: 'string', description: "A provider key (e.g. brave, tavily, exa). Omitted: the organization's default provider." },
      count: { type: 'integer', description: "Number of results; clamped to the provider's supported range." },
    },
    required: ['query'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string' },
      provider: { type: 'string' },
      results: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            title: { type: 'string' },
            url: { type: 'string' },
            snippet: { type: 'string' },
            published_date: { type: 'string', description: 'YYYY-MM-DD; omitted when unknown.' },
            score: { type: 'number' },
          },
          required: ['title', 'url', 'snippet', 'score'],
        },
      },
    },
    required: ['query', 'provider', 'results'],
  },
  annotations: { readOnlyHint: true, openWorldHint: true },
};

/** `web_search`: the gated search; answers the spec's result shape (without the gateway's charge details). */
export async function callWebSearch(caller: SearchCaller, args: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>> {
  const unknown = Object.keys(args).find((k) => !['query', 'provider', 'count'].includes(k));
  if (unknown) throw errors.invalidRequest(`Unknown argument '${unknown}'.`);
  const out = await runSearch(
    caller,
    {
      kind: 'search',
      query: args.query as string,
      provider: args.provider === undefined ? undefined : (args.provider as string),
      count: args.count === undefined ? undefined : (args.count as number),
    },
    signal,
  );
  if (out.kind !== 'search') throw new Error('search answered a fetch');
  return { query: out.query, provider: out.provider, results: out.results };
}
