import type { Request, Response } from 'express';
import { StoredResponse } from '../../../shared/db/models';
import { pageLimit, queryText, queryOrder } from '../batches/gate';
import { findStored, responseNotFound } from './store';
import { withinRetention } from '../../../shared/responses/retention';
import { scopeWhere } from '../../../shared/tenancy/store-scope';
import { includeOf, shownItem } from './include';

type Item = Record<string, unknown>;

/**
 * `GET /v1/responses/{id}/input_items`: OpenAI's ResponseItemList `{object: "list", data, first_id,
 * last_id, has_more}`, `order` desc (default) or asc, `limit` 1..100 (default 20), cursors `after`
 * and `before` (item ids; an id not in the list gives an empty page). `include` shows what it adds
 * only when it asks (include.ts): a reasoning item's `encrypted_content`, an input image's URL, an
 * echoed answer's log probabilities.
 */
export async function listInputItems(req: Request, res: Response): Promise<void> {
  const include = includeOf(req);
  const row = await findStored(req, String(req.params.id));
  const limit = pageLimit(req.query.limit);
  const order = queryOrder(req.query, 'desc');
  const after = queryText(req.query, 'after');
  const before = queryText(req.query, 'before');
  let items = order === 'asc' ? [...row.inputItems] : [...row.inputItems].reverse();
  let data: Item[];
  let hasMore: boolean;
  if (before !== undefined) {
    const at = items.findIndex((i) => i.id === before);
    items = at < 0 ? [] : items.slice(0, at);
    data = items.slice(-limit);
    hasMore = items.length > limit;
  } else {
    if (after !== undefined) {
      const at = items.findIndex((i) => i.id === after);
      items = at < 0 ? [] : items.slice(at + 1);
    }
    data = items.slice(0, limit);
    hasMore = items.length > limit;
  }
  data = data.map((i) => shownItem(i, include));
  res.json({ object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore });
}

/** `DELETE /v1/responses/{id}`: the caller's stored response is gone; another org's or project's id (store-scope.ts), or one past the retention, is not found. */
export async function deleteResponse(req: Request, res: Response): Promise<void> {
  const id = String(req.params.id);
  const gone = await StoredResponse.destroy({ where: Object.assign(scopeWhere(req.auth!), { id }, withinRetention()) });
  if (!gone) throw responseNotFound(id);
  res.json({ id, object: 'response.deleted', deleted: true });
}
