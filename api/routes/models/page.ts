import type { Request } from 'express';
import { ApiError } from '../../../shared/errors/ApiError';
import { queryText, queryValues } from '../batches/gate';

const LIFECYCLES = ['active', 'deprecated', 'retired'] as const;
type Lifecycle = (typeof LIFECYCLES)[number];

/**
 * The stages the messages-dialect model list keeps (@anthropic-ai/sdk 1.16 resources/models.ts,
 * ModelListParams.lifecycle: "Up to 3 values. When omitted, the list contains the `active` and
 * `deprecated` models"), as the SDK sends them (`lifecycle[]=…`, its brackets form) or plainly
 * (`lifecycle=…`), once or repeated. Another value, or more than 3: 400 naming `lifecycle`.
 */
export function lifecyclesOf(query: Request['query']): readonly Lifecycle[] {
  const given = queryValues(query, 'lifecycle');
  if (given.length === 0) return ['active', 'deprecated'];
  const bad = given.find((v) => !(LIFECYCLES as readonly unknown[]).includes(v));
  if (bad !== undefined || given.length > 3) {
    throw new ApiError(400, 'invalid_request', `\`lifecycle\` takes up to 3 of ${LIFECYCLES.join(', ')}${bad === undefined ? '' : `; got ${JSON.stringify(bad)}`}.`, { param: 'lifecycle' });
  }
  return given as Lifecycle[];
}

/**
 * The models in the order of Anthropic's list ("More recently released models are listed first",
 * docs.anthropic.com/en/api/models-list): the newest catalog entry first, ties by id.
 */
export function newestFirst<T extends { createdAt: Date; publicId: string }>(models: T[]): T[] {
  return [...models].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.publicId < b.publicId ? -1 : a.publicId > b.publicId ? 1 : 0));
}

/**
 * One page of the messages-dialect model list, as Anthropic's Models API pages it (the SDK's
 * `Page`): `limit` 1–1000 (default 20), and a cursor, `after_id` (the items after it) or
 * `before_id` (the `limit` items just before it). `has_more`: items lie beyond the page in the
 * direction of travel. A cursor that names no listed model, both cursors, a bad limit, or one of
 * them given twice (`limit=1&limit=2`): 400 naming it.
 */
export function anthropicPage<T extends { id: string }>(items: T[], query: Request['query']): { data: T[]; has_more: boolean } {
  const rawLimit = queryText(query, 'limit');
  const limit = rawLimit === undefined ? 20 : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000 || (rawLimit !== undefined && !/^\d+$/.test(rawLimit))) {
    throw new ApiError(400, 'invalid_request', '`limit` must be an integer from 1 to 1000.', { param: 'limit' });
  }
  const after = queryText(query, 'after_id');
  const before = queryText(query, 'before_id');
  if (after !== undefined && before !== undefined) throw new ApiError(400, 'invalid_request', 'Give `after_id` or `before_id`, not both.', { param: 'before_id' });
  const at = (id: string, param: string) => {
    const i = items.findIndex((m) => m.id === id);
    if (i < 0) throw new ApiError(400, 'invalid_request', `\`${param}\` '${id}' is not a model in this list.`, { param });
    return i;
  };
  if (before !== undefined) {
    const end = at(before, 'before_id');
    const start = Math.max(0, end - limit);
    return { data: items.slice(start, end), has_more: start > 0 };
  }
  const start = after === undefined ? 0 : at(after, 'after_id') + 1;
  return { data: items.slice(start, start + limit), has_more: start + limit < items.length };
}
