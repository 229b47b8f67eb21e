import type { Request, Response } from 'express';
import { ApiError } from '../../../shared/errors/ApiError';
import { refuseUnknownFields } from '../../validate';
import { errors } from '../../../shared/errors/codes';
import { logger } from '../../../shared/logger';
import { storable, storableCopy } from '../../../shared/http/json-checks';
import { pageLimit, queryText, queryOrder } from '../batches/gate';
import {
  deleteStoredChat,
  findStoredChat,
  insertStoredChat,
  listStoredChats,
  updateStoredChatMetadata,
  type StoredChat,
} from '../../../shared/chat-store/stored-chat';

type Json = Record<string, unknown>;

const notFound = (id: string) => errors.notFound(`No stored chat completion with id '${id}' was found (only completions created with \`store: true\` are kept).`);

/**
 * OpenAI's metadata: at most 16 pairs, keys up to 64 characters, values strings up to 512; null or
 * absent is none. Anything else is refused, naming `metadata`.
 */
export function checkMetadata(v: unknown): Record<string, string> {
  if (v === undefined || v === null) return {};
  const bad = (why: string) => new ApiError(400, 'invalid_request', `Invalid 'metadata': ${why}.`, { param: 'metadata' });
  if (typeof v !== 'object' || Array.isArray(v)) throw bad('expected an object of string values');
  const entries = Object.entries(v as Json);
  if (entries.length > 16) throw bad('at most 16 keys');
  for (const [k, x] of entries) {
    if (k.length > 64) throw bad(`key '${k.slice(0, 64)}…' is longer than 64 characters`);
    if (typeof x !== 'string') throw bad(`the value of '${k}' must be a string`);
    if (x.length > 512) throw bad(`the value of '${k}' is longer than 512 characters`);
  }
  return v as Record<string, string>;
}

/** The part types a listed message's `content_parts` holds (ChatCompletionStoreMessage: "an array of `text` and `image_url` parts"). */
const LISTED_PARTS = new Set(['text', 'image_url']);

/** The text of the parts of `type` (`text` or `refusal`, the key of their text is the type), joined; undefined when there are none. */
function partsText(parts: Json[], type: 'text' | 'refusal'): string | undefined {
  const of = parts.filter((p) => p.type === type);
  return of.length ? of.map((p) => String(p[type] ?? '')).join('') : undefined;
}

/**
 * A request message as `/messages` lists it: the fields of the SDK's ChatCompletionStoreMessage (openai
 * 7.x, completions.d.ts: ChatCompletionMessage's `content`, `refusal`, `tool_calls`, `function_call`,
 * and `id`, `content_parts`) and of OpenAI's documented example (`name`). `content`: the text (text parts
 * joined); `refusal`: an assistant message's refusal (its `refusal`, or its refusal parts), else null;
 * `content_parts`: the text and image parts when parts were sent, else null; tool calls, a legacy
 * function call and a tool message's call id as sent.
 */
function listedMessage(completionId: string, m: Json, i: number): Json {
  const parts = Array.isArray(m.content) ? (m.content as Json[]) : null;
  const text = parts ? (partsText(parts, 'text') ?? '') : (m.content ?? null);
  const refusal = typeof m.refusal === 'string' ? m.refusal : parts ? (partsText(parts, 'refusal') ?? null) : null;
  const out: Json = { id: `${completionId}-${i}`, role: m.role, content: text, refusal, name: m.name ?? null, content_parts: parts && parts.filter((p) => LISTED_PARTS.has(String(p.type))) };
  if (m.tool_calls) out.tool_calls = m.tool_calls;
  if (m.function_call) out.function_call = m.function_call;
  if (m.tool_call_id) out.tool_call_id = m.tool_call_id;
  return out;
}

/** The stored completion as retrieve and list answer it: the completion with its current metadata. */
function shown(row: StoredChat): Json {
  return Object.assign({}, row.completion, { metadata: row.metadata });
}

/**
 * Keeps the completion of a `store: true` request for the caller's org (its request messages and
 * metadata with it). A failure to store is logged, not the caller's: the answer was made and billed.
 */
export async function storeChat(req: Request, body: Json, completion: Json | undefined, metadata: Record<string, string>): Promise<void> {
  if (!completion || typeof completion.id !== 'string') return;
  const a = req.auth!;
  try {
    await insertStoredChat({
      orgId: a.orgId,
      projectId: a.projectId,
      apiKeyId: a.keyId,
      model: String(completion.model ?? body.model),
      metadata,
      completion: storableCopy(completion),
      messages: storableCopy((body.messages as unknown[]) ?? []),
    });
  } catch (err) {
    logger.warn({ err, requestId: req.id }, 'storing a chat completion failed');
  }
}

async function found(req: Request): Promise<StoredChat> {
  const id = String(req.params.id);
  const row = await findStoredChat(req.auth!, id);
  if (!row) throw notFound(id);
  return row;
}

function orderOf(req: Request): 'asc' | 'desc' {
  const order = queryOrder(req.query, 'asc');
  return order;
}

/** `GET /v1/chat/completions`: the org's stored completions, filtered by `model` and `metadata[key]=value`. */
export async function listChats(req: Request, res: Response): Promise<void> {
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.query)) {
    const m = /^metadata\[(.+)\]$/.exec(k);
    if (m) metadata[m[1]] = String(queryText(req.query, k) ?? v);
  }
  const q = { model: queryText(req.query, 'model'), metadata, after: queryText(req.query, 'after'), limit: pageLimit(req.query.limit), order: orderOf(req) };
  // stored metadata never holds a NUL or a lone surrogate (refused when given), so such a pair matches
  // nothing; Postgres would refuse it in the jsonb filter (a 500)
  const matchesNone = Object.entries(metadata).some(([k, v]) => !storable(k) || !storable(v));
  const { rows, hasMore } = matchesNone ? { rows: [], hasMore: false } : await listStoredChats(req.auth!, q);
  const data = rows.map(shown);
  res.json({ object: 'list', data, first_id: rows[0]?.id ?? null, last_id: rows.at(-1)?.id ?? null, has_more: hasMore });
}

/** `GET /v1/chat/completions/{id}`. */
export async function getChat(req: Request, res: Response): Promise<void> {
  res.json(shown(await found(req)));
}

/** `POST /v1/chat/completions/{id}`: only `metadata` can change (required; null clears it). */
export async function updateChat(req: Request, res: Response): Promise<void> {
  const body = (req.body ?? {}) as Json;
  if (!('metadata' in body)) throw new ApiError(400, 'invalid_request', "Missing required parameter: 'metadata'.", { param: 'metadata' });
  refuseUnknownFields(body, ['metadata'], " Only 'metadata' can be modified.");
  const metadata = checkMetadata(body.metadata);
  const id = String(req.params.id);
  if (!(await updateStoredChatMetadata(req.auth!, id, metadata))) throw notFound(id);
  res.json(shown(await found(req)));
}

/** `DELETE /v1/chat/completions/{id}`. */
export async function deleteChat(req: Request, res: Response): Promise<void> {
  const id = String(req.params.id);
  if (!(await deleteStoredChat(req.auth!, id))) throw notFound(id);
  res.json({ object: 'chat.completion.deleted', id, deleted: true });
}

/** `GET /v1/chat/completions/{id}/messages`: the request's messages, ids `<completion id>-<index>`, paged by `after`, `limit`, `order` (asc by default). */
export async function listChatMessages(req: Request, res: Response): Promise<void> {
  const row = await found(req);
  const limit = pageLimit(req.query.limit);
  const order = orderOf(req);
  let items = row.messages.map((m, i) => listedMessage(row.id, m, i));
  if (order === 'desc') items.reverse();
  const after = queryText(req.query, 'after');
  if (after !== undefined) {
    const at = items.findIndex((m) => m.id === after);
    items = at < 0 ? [] : items.slice(at + 1);
  }
  const data = items.slice(0, limit);
  res.json({ object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: items.length > limit });
}
