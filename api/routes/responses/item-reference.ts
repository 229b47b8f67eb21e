import type { Request } from 'express';
import { ApiError } from '../../../shared/errors/ApiError';
import { findReferencedItems } from '../../../shared/responses/item-lookup';
import type { ResponsesItem } from '../../dialects/responses/request';

/**
 * An input item that stands for a stored item (OpenAI's ResponseInputItem.ItemReference, openai
 * 7.60.0): `{type: 'item_reference', id}`, or `{id}` alone, whose `type` the SDK types optional (no
 * role and no content: not a message).
 */
export function isItemReference(item: ResponsesItem): boolean {
  if (item.type === 'item_reference') return true;
  return item.type == null && item.role === undefined && item.content === undefined && typeof item.id === 'string';
}

/**
 * OpenAI's answer to a reference it has no item for: 404 naming `input`, in its words (with its
 * advice when the request itself is not stored, as OpenAI adds it).
 */
export function itemNotFound(id: string, store: boolean | null | undefined, param = 'input'): ApiError {
  const advice = store === false ? ' Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.' : '';
  return new ApiError(404, 'item_not_found', `Item with id '${id}' not found.${advice}`, { param });
}

/**
 * `items` with each item reference replaced by a copy of the item it names: an output or input item
 * of a response stored by the request's org and project scope (shared/tenancy/store-scope.ts), or an
 * item of one of its conversations (shared/responses/item-lookup.ts), as it was stored. An id found
 * nowhere is `notFound(id)`. One lookup for all the references; a list without any is returned as it is.
 */
export async function withReferencedItems(req: Request, items: ResponsesItem[], notFound: (id: string) => ApiError): Promise<ResponsesItem[]> {
  if (!items.some(isItemReference)) return items;
  const ids = items.filter(isItemReference).map((i) => String(i.id));
  const found = await findReferencedItems(req.auth!, ids);
  const missing = ids.find((id) => !found.has(id));
  if (missing !== undefined) throw notFound(missing);
  // a copy for each place, so that an item referenced twice is two objects (notePlaces keys on them)
  return items.map((i) => (isItemReference(i) ? (structuredClone(found.get(String(i.id))) as ResponsesItem) : i));
}

/**
 * A request's `input` with each item reference replaced by the item it names (withReferencedItems).
 * An id found nowhere is OpenAI's 404 naming `input`, before anything is sent or billed.
 */
export async function resolveItemReferences<T extends { input?: string | ResponsesItem[] | null; store?: boolean | null }>(req: Request, body: T): Promise<void> {
  const input = body.input;
  if (!Array.isArray(input) || !input.some(isItemReference)) return;
  body.input = await withReferencedItems(req, input, (id) => itemNotFound(id, body.store));
}
