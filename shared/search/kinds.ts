/** The search adapters there are (`search_providers.kind`): workers/providers/search has one for each. */
export const SEARCH_KINDS = ['brave', 'tavily', 'exa'] as const;
export type SearchKind = (typeof SEARCH_KINDS)[number];
