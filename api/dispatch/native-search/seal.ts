import { decrypt, encrypt } from '../../../shared/crypto';
import type { SearchResultItem } from '../../../shared/search/types';

/**
 * The opaque results field (`encrypted_content`): each search result sealed with the gateway's
 * SECRET_KEY (AES-GCM), so a client that echoes it back gets the same results reused without a new
 * search, and cannot forge one. Every seal names the organization it was made for (authenticated
 * with the rest): another organization's seal does not open, so its search re-runs and is billed to
 * the organization that replays it. Seals made before version 2 named no organization and do not open.
 */
const V = 2;

interface Sealed {
  v: typeof V;
  org: string;
  query: string;
  provider: string;
  item: SearchResultItem;
}

/** The sealed JSON, when it opens with this key, is of this version and was made for `orgId`. */
function open<T extends { v: number; org: string }>(value: unknown, orgId: string): T | undefined {
  if (typeof value !== 'string' || !value) return undefined;
  try {
    const s = JSON.parse(decrypt(value)) as T;
    return s?.v === V && s.org === orgId ? s : undefined;
  } catch {
    return undefined;
  }
}

export function sealResult(orgId: string, query: string, provider: string, item: SearchResultItem): string {
  return encrypt(JSON.stringify({ v: V, org: orgId, query, provider, item } satisfies Sealed));
}

/** The sealed result, or undefined when the value is missing, forged, from another key or another organization. */
export function openResult(value: unknown, orgId: string): Sealed | undefined {
  const s = open<Sealed>(value, orgId);
  return typeof s?.item?.url === 'string' ? s : undefined;
}

/** A citation's opaque pointer to its result. */
export function sealIndex(orgId: string, url: string, index: number): string {
  return encrypt(JSON.stringify({ v: V, org: orgId, url, index }));
}

/** A whole result set (the responses dialect's opaque field on a web_search_call item). */
export function sealResults(orgId: string, query: string, provider: string, items: SearchResultItem[]): string {
  return encrypt(JSON.stringify({ v: V, org: orgId, query, provider, items }));
}

export function openResults(value: unknown, orgId: string): { query: string; provider: string; items: SearchResultItem[] } | undefined {
  const s = open<{ v: number; org: string; query: string; provider: string; items: SearchResultItem[] }>(value, orgId);
  return Array.isArray(s?.items) ? s : undefined;
}

/** A fetched page (the responses dialect's opaque field on an `open_page` web_search_call item). */
export function sealPage(orgId: string, page: { url: string; title?: string; content: string }): string {
  return encrypt(JSON.stringify({ v: V, org: orgId, page: { url: page.url, title: page.title, content: page.content } }));
}

export function openPage(value: unknown, orgId: string): { url: string; title?: string; content: string } | undefined {
  const s = open<{ v: number; org: string; page?: { url: string; title?: string; content: string } }>(value, orgId);
  return typeof s?.page?.content === 'string' ? s.page : undefined;
}
