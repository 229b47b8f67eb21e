import type { Request } from 'express';
import { ApiError } from '../../../shared/errors/ApiError';
import { INCLUDABLE } from '../responses/schema';

type Json = Record<string, unknown>;

/**
 * The `include` query parameter of the Conversations API's item routes (OpenAI's ItemListParams,
 * ItemRetrieveParams, ItemCreateParams: an array of ResponseIncludable), as `include[]=…` (the
 * official SDKs' form) or `include=…`, once or repeated; a value that is not includable is a 400.
 */
export function includeOf(req: Request): string[] {
  const given = [req.query['include[]'], req.query.include].flatMap((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]));
  for (const v of given) {
    if (typeof v !== 'string' || !(INCLUDABLE as readonly string[]).includes(v)) {
      throw new ApiError(400, 'invalid_request', `'include' takes ${INCLUDABLE.join(', ')}; got ${JSON.stringify(v)}.`, { param: 'include' });
    }
  }
  return given as string[];
}

/**
 * A conversation's item as the items API shows it: a reasoning item's `encrypted_content` (kept whole
 * in the conversation: responses/conversation.ts) only when `include` asks for
 * `reasoning.encrypted_content`, as OpenAI shows it.
 */
export function shownItem(item: Json, include: string[]): Json {
  if (item.type !== 'reasoning' || item.encrypted_content === undefined || include.includes('reasoning.encrypted_content')) return item;
  const { encrypted_content: _kept, ...shown } = item;
  return shown;
}
