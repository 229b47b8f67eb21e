import type { SearchAdapter } from './types';
import type { SearchKind } from '../../../shared/search/kinds';
import { brave } from './brave';
import { tavily } from './tavily';
import { exa } from './exa';

/** Adapters by `search_providers.kind`. */
export const SEARCH_ADAPTERS: Record<SearchKind, SearchAdapter> = { brave, tavily, exa };

export function searchAdapter(kind: string): SearchAdapter | undefined {
  return Object.prototype.hasOwnProperty.call(SEARCH_ADAPTERS, kind) ? SEARCH_ADAPTERS[kind as SearchKind] : undefined;
}

export { clampCount } from './normalize';
export type { SearchAdapter, SearchCall } from './types';
