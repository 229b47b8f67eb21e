import { decrypt, encrypt } from '../../../shared/crypto';
import type { SearchResultItem } from '../../../shared/search/types';

/**
 * The opaque results field (`encrypted_content`): each search result sealed with the gateway's
 * SECRET_KEY (AES-GCM), so a client that echoes it back gets the same results reused without a new
 * search, and cannot forge one.
 */
interface Sealed {
  v: 1;
  query: string;
  provider: string;
  item: SearchResultItem;
}

export function sealResult(query: string, provider: string, item: SearchResultItem): string {
  return encrypt(JSON.stringify({ v: 1, query, provider, item } satisfies Sealed));
}

/** The sealed result, or undefined when the value is missing, forged or from another key. */
export function openResult(value: unknown): Sealed | undefined {
  if (typeof value !== 'string' || !value) return undefined;
  try {
    const s = JSON.parse(decrypt(value)) as Sealed;
    return s?.v === 1 && typeof s.item?.url === 'string' ? s : undefined;
  } catch {
    return undefined;
  }
}

/** A citation's opaque pointer to its result. */
export function sealIndex(url: string, index: number): string {
  return encrypt(JSON.stringify({ v: 1, url, index }));
}

/** A whole result set (the responses dialect's opaque field on a web_search_call item). */
export function sealResults(query: string, provider: string, items: SearchResultItem[]): string {
  return encrypt(JSON.stringify({ v: 1, query, provider, items }));
}

export function openResults(value: unknown): { query: string; provider: string; items: SearchResultItem[] } | undefined {
  if (typeof value !== 'string' || !value) return undefined;
  try {
    const s = JSON.parse(decrypt(value)) as { v: number; query: string; provider: string; items: SearchResultItem[] };
    return s?.v === 1 && Array.isArray(s.items) ? s : undefined;
  } catch {
    return undefined;
  }
}

/** A fetched page (the responses dialect's opaque field on an `open_page` web_search_call item). */
export function sealPage(page: { url: string; title?: string; content: string }): string {
  return encrypt(JSON.stringify({ v: 1, page: { url: page.url, title: page.title, content: page.content } }));
}

export function openPage(value: unknown): { url: string; title?: string; content: string } | undefined {
  if (typeof value !== 'string' || !value) return undefined;
  try {
    const s = JSON.parse(decrypt(value)) as { v: number; page?: { url: string; title?: string; content: string } };
    return s?.v === 1 && typeof s.page?.content === 'string' ? s.page : undefined;
  } catch {
    return undefined;
  }
}
