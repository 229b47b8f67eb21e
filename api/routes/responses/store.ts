import type { Request } from 'express';
import { StoredResponse } from '../../../shared/db/models';
import { ApiError } from '../../../shared/errors/ApiError';
import type { CanonicalMessage } from '../../dialects/canonical';
import { storableCopy } from '../../../shared/http/json-checks';
import type { Configuration, ResponsesItem } from '../../dialects/responses/request';
import { requestInputItems } from '../../dialects/responses/input-items';
import { withinRetention } from '../../../shared/responses/retention';
import { scopeWhere } from '../../../shared/tenancy/store-scope';
import { configurationAfter } from './configuration';

/** OpenAI's words for a response it does not have (retrieve, input items, delete, cancel): "Response with id '…' not found.", no param. */
export const responseNotFound = (id: string) => new ApiError(404, 'response_not_found', `Response with id '${id}' not found.`);

/**
 * A `previous_response_id` that names no stored response of the org (unknown, another org's, made with
 * `store: false`, deleted or past the retention): OpenAI's 400 `previous_response_not_found`, naming the
 * field, which clients read to send the whole context again instead of the id.
 */
export const previousResponseNotFound = (id: string) =>
  new ApiError(400, 'previous_response_not_found', `Previous response with id '${id}' not found.`, { param: 'previous_response_id' });

/**
 * A stored response of the caller's org (and project, when the request has one: store-scope.ts),
 * within the retention; another org's or project's id, or one past the retention, is not found,
 * exactly like a missing one.
 */
export async function findStored(req: Request, id: string): Promise<StoredResponse> {
  const row = await storedRow(req, id);
  if (!row) throw responseNotFound(id);
  return row;
}

function storedRow(req: Request, id: string): Promise<StoredResponse | null> {
  return StoredResponse.findOne({ where: Object.assign(scopeWhere(req.auth!), { id }, withinRetention()) });
}

/** The history a follow-up continues: the previous response's whole conversation, the settings its chain's `configuration_update` items left in effect, and its output. */
export async function historyOf(req: Request, previousId: string | null | undefined): Promise<{ messages: CanonicalMessage[]; configuration?: Configuration | null; output?: unknown }> {
  if (!previousId) return { messages: [] };
  const row = await storedRow(req, previousId);
  if (!row) throw previousResponseNotFound(previousId);
  // a background response that has not ended has no answer to continue from yet
  const status = String(row.response.status);
  if (row.response.background === true && (status === 'queued' || status === 'in_progress')) {
    throw new ApiError(400, 'invalid_request', `Previous response '${previousId}' is still ${status}; continue it once it has completed.`, { param: 'previous_response_id' });
  }
  // its output: the calls it left for the follow-up to answer (call-pairing.ts, refuseCallWithoutOutput)
  return { messages: row.conversation as CanonicalMessage[], configuration: row.configuration as Configuration | null, output: row.response.output };
}

/**
 * Stores a response and its conversation. The caller's input was already refused if Postgres could
 * not store it; the upstream's answer may still hold NUL or lone surrogates, which are stored as
 * U+FFFD instead of failing a request that was answered (and billed). The response is kept as
 * built, whole (an Anthropic-native turn's signed thinking in its reasoning items' `encrypted_content`
 * whatever the request's `include` said), so that `GET /v1/responses/{id}` shows what its own
 * `include` asks (include.ts, shownResponse); `request`'s input as its input item list (the same items, ids included,
 * that its conversation gets: requestInputItems); the settings `configuration_update` items leave in effect
 * after it (the history's, then its input's: configuration.ts), for a follow-up (null: none set).
 */
export async function storeResponse(req: Request, response: Record<string, unknown>, conversation: CanonicalMessage[], request: { input?: string | ResponsesItem[] }): Promise<void> {
  const a = req.auth!;
  await StoredResponse.create({
    id: String(response.id),
    orgId: a.orgId,
    projectId: a.projectId,
    apiKeyId: a.keyId,
    model: String(response.model),
    conversation: storableCopy(conversation),
    response: storableCopy(response),
    inputItems: storableCopy(requestInputItems(request)),
    configuration: storedConfiguration(request),
  });
}

function storedConfiguration(request: { input?: string | ResponsesItem[] }): Record<string, unknown> | null {
  const c = configurationAfter(request) as Record<string, unknown>;
  return Object.keys(c).length ? storableCopy(c) : null;
}
