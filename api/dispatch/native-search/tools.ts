import type { CanonicalTool } from '../../dialects/canonical';

/** The two server tools the gateway runs itself (spec "Native search interception"). */
export type NativeKind = 'search' | 'fetch';

/** One declared server tool, as the dialect described it. */
export interface NativeTool {
  kind: NativeKind;
  /** Uses allowed in one request (the tool's `max_uses`); unlimited when absent. */
  maxUses?: number;
  allowedDomains?: string[];
  blockedDomains?: string[];
  /** Web search only: the user's country (from `user_location`), ISO 3166-1 alpha-2 uppercase. */
  country?: string;
  /** Web fetch only: characters of page text handed to the model at most. */
  maxChars?: number;
}

export type NativeToolSet = Partial<Record<NativeKind, NativeTool>>;

/** A tool's `user_location` (Anthropic's and OpenAI's `{type: 'approximate', country, ...}`) → its country code. */
export function locationCountry(location: unknown): string | undefined {
  const country = (location as { country?: unknown } | null | undefined)?.country;
  return typeof country === 'string' && /^[A-Za-z]{2}$/.test(country) ? country.toUpperCase() : undefined;
}

/** The function names the model sees; also the `name` of Anthropic's server_tool_use blocks. */
export const NATIVE_NAMES: Record<NativeKind, string> = { search: 'web_search', fetch: 'web_fetch' };

export function kindOfName(name: string, set: NativeToolSet): NativeKind | undefined {
  if (set.search && name === NATIVE_NAMES.search) return 'search';
  if (set.fetch && name === NATIVE_NAMES.fetch) return 'fetch';
  return undefined;
}

/** The ordinary function tools offered to the model in place of the server tools. */
export function functionTools(set: NativeToolSet): CanonicalTool[] {
  const out: CanonicalTool[] = [];
  if (set.search) {
    out.push({
      type: 'function',
      function: {
        name: NATIVE_NAMES.search,
        description: 'Search the web. Returns result titles, URLs, dates and snippets; cite the URLs you use.',
        parameters: { type: 'object', properties: { query: { type: 'string', description: 'The search query.' } }, required: ['query'] },
      },
    });
  }
  if (set.fetch) {
    out.push({
      type: 'function',
      function: {
        name: NATIVE_NAMES.fetch,
        description: 'Fetch one https web page and return its text.',
        parameters: { type: 'object', properties: { url: { type: 'string', description: 'The https URL to fetch.' } }, required: ['url'] },
      },
    });
  }
  return out;
}
