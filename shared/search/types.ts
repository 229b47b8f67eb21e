/**
 * The web search rails' shared types: what a caller is, what it asks for, and what it gets back.
 * Used by the web pod (MCP tool, /v1/alpha/search, native interception) and the search pool.
 */

/** One result, the same shape for every provider (spec "Web search result"). */
export interface SearchResultItem {
  title: string;
  url: string;
  snippet: string;
  /** `YYYY-MM-DD`; omitted when the provider does not say. */
  published_date?: string;
  score: number;
}

/** A search answer. An empty `results` is an answer, not an error. */
export interface SearchResult {
  query: string;
  /** The provider key that answered (`brave`, `tavily`, `exa`). */
  provider: string;
  results: SearchResultItem[];
}

/** A fetched page (native `web_fetch` interception); produced by workers/providers/fetch. */
export interface FetchResult {
  url: string;
  /** The provider key (or `fetch`) whose price row was charged. */
  provider: string;
  title?: string;
  content: string;
  contentType?: string;
  retrievedAt?: string;
}

export type SearchArgs =
  | { kind: 'search'; query: string; provider?: string; count?: number; /** ISO 3166-1 alpha-2 (e.g. a native tool's user_location). */ country?: string }
  | { kind: 'fetch'; url: string; allowedDomains?: string[]; blockedDomains?: string[] };

/** Where the key that pays the upstream came from. */
export type KeySource = 'platform' | 'own';
/** How a search is charged: within the free allowance, as paid overage, or not at all (own key). */
export type ChargeClass = 'allowance' | 'overage' | 'own_key';

/** What the ledger says about a settled search. */
export interface SearchCharge {
  provider: string;
  keySource: KeySource;
  chargeClass: ChargeClass;
  /** Price charged for this search in micro-dollars (0 for allowance and own_key). */
  priceMicros: number;
}

export type SearchOutcome =
  | ({ kind: 'search' } & SearchResult & { charge: SearchCharge })
  | ({ kind: 'fetch' } & FetchResult & { charge: SearchCharge });
