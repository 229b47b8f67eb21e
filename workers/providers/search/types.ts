import type { SearchResultItem } from '../../../shared/search/types';
import type { CancelSignal } from '../../../shared/cancel-source';

/** One provider call: where, with which key, and the job's cancellation and deadline. */
export interface SearchCall {
  baseUrl: string;
  apiKey: string;
  /** `own` when the org's own key pays: an auth refusal is then the org's to fix. */
  keySource: 'platform' | 'own';
  query: string;
  /** Already clamped to the adapter's range. */
  count: number;
  /** Where the user is, ISO 3166-1 alpha-2 uppercase, for adapters whose API takes a country. */
  country?: string;
  signal: CancelSignal;
  deadline: number;
}

/** A provider adapter: its documented wire format, mapped to the spec's result shape. */
export interface SearchAdapter {
  kind: string;
  /** The provider's own accepted range of result counts, and the count used when the caller names none. */
  count: { min: number; max: number; default: number };
  search(call: SearchCall): Promise<SearchResultItem[]>;
}
