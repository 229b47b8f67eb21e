import { Router, type Request, type Response } from 'express';
import Joi from 'joi';
import type { AppContext } from '../../context';
import { only } from '../only';
import { requireJson } from '../../middleware/require-json';
import { ApiError } from '../../../shared/errors/ApiError';
import { pageLimit, queryText, queryOrder } from '../batches/gate';
import { checkMetadata } from '../chat/stored';
import { newId } from '../../dialects/responses/response';
import { inputItemsOf } from '../../dialects/responses/input-items';
import type { ResponsesItem } from '../../dialects/responses/request';
import { storableCopy } from '../../../shared/http/json-checks';
import { conversationMessages, conversationNotFound } from '../responses/conversation';
import { includeOf, shownItem } from '../responses/include';
import { inputItem } from '../responses/schema';
import { itemNotFound, withReferencedItems } from '../responses/item-reference';
import { refuseUnknownFields, validate } from '../../validate';
import {
  addConversationItems,
  createConversation,
  deleteConversation,
  deleteConversationItem,
  findConversation,
  findConversationItem,
  heldItemIds,
  listConversationItems,
  updateConversationMetadata,
  type ConversationRow,
} from '../../../shared/conversations/store';

type Json = Record<string, unknown>;

/** At most this many items are added by one request (OpenAI's document: "up to 20 items at a time"). */
const MAX_ITEMS = 20;

/** OpenAI's ConversationResource. */
export function conversationObject(row: ConversationRow): Json {
  return { id: row.id, object: 'conversation', created_at: Math.floor(new Date(row.created_at).getTime() / 1000), metadata: row.metadata };
}

const invalid = (message: string, param: string) => new ApiError(400, 'invalid_request', message, { param });

/** The body, once it holds no field but `allowed` (refuseUnknownFields). */
function onlyFields(body: Json, allowed: readonly string[]): Json {
  refuseUnknownFields(body, allowed);
  return body;
}

/**
 * A request's `items`, checked: each an input item (an object with a `type`, a message with a
 * `role`, or an item reference: `{id}` alone, OpenAI's ItemReference with its `type` left out), each
 * item's own fields as POST /v1/responses checks them; 1 to 20 of them (0 allowed at creation).
 */
function checkedItems(v: unknown, allowNone: boolean): ResponsesItem[] {
  if (v === undefined || v === null) {
    if (allowNone) return [];
    throw invalid("'items' is required: an array of 1 to 20 input items.", 'items');
  }
  if (!Array.isArray(v) || (!allowNone && v.length === 0)) throw invalid("'items' must be an array of 1 to 20 input items.", 'items');
  if (v.length > MAX_ITEMS) throw invalid(`'items' has ${v.length} items; at most ${MAX_ITEMS} are added at a time.`, 'items');
  v.forEach((it, i) => {
    if (!it || typeof it !== 'object' || Array.isArray(it)) throw invalid(`'items[${i}]' must be an object.`, `items[${i}]`);
    const o = it as Json;
    if (o.type === undefined && typeof o.role !== 'string' && o.id === undefined) throw invalid(`'items[${i}]' needs a 'type' (or a message's 'role').`, `items[${i}]`);
    if (o.type !== undefined && typeof o.type !== 'string') throw invalid(`'items[${i}].type' must be a string.`, `items[${i}].type`);
  });
  // each item's own fields as POST /v1/responses checks them (a message's parts, a call's ids, a reference's id...), named under `items`
  validate(Joi.object({ items: Joi.array().items(inputItem) }), { items: v });
  return v as ResponsesItem[];
}

/**
 * Checked items (checkedItems) as the conversation keeps them: an item reference replaced by the
 * stored item it names, as POST /v1/responses replaces it (item-reference.ts: a response's or
 * conversation's item in the request's org and project scope; an id found nowhere is 404
 * `item_not_found` naming `items`); each item given an id and a message its status and content parts
 * (dialects/responses/input-items.ts); no id twice.
 */
async function storedItems(req: Request, sent: ResponsesItem[]): Promise<Json[]> {
  const resolved = await withReferencedItems(req, sent, (id) => itemNotFound(id, undefined, 'items'));
  const items = storableCopy(inputItemsOf(resolved));
  // refused now, not when a response reads them: an item no response could continue from
  conversationMessages(items, req.auth!.orgId);
  const ids = new Set<string>();
  for (const it of items) {
    if (ids.has(String(it.id))) throw invalid(`Item id '${String(it.id)}' is given twice.`, 'items');
    ids.add(String(it.id));
  }
  return items;
}

/** The org's conversation named by the path, or 404. */
async function conversationOf(req: Request): Promise<ConversationRow> {
  const id = String(req.params.id);
  const row = await findConversation(req.auth!, id);
  if (!row) throw conversationNotFound(id);
  return row;
}

const listOf = (data: Json[], hasMore: boolean) => ({ object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore });

async function create(req: Request, res: Response): Promise<void> {
  const body = onlyFields((req.body ?? {}) as Json, ['items', 'metadata']);
  const metadata = checkMetadata(body.metadata);
  const items = await storedItems(req, checkedItems(body.items, true));
  const a = req.auth!;
  const row = await createConversation({ orgId: a.orgId, id: newId('conv'), projectId: a.projectId, apiKeyId: a.keyId, metadata }, items);
  res.json(conversationObject(row));
}

async function update(req: Request, res: Response): Promise<void> {
  const body = onlyFields((req.body ?? {}) as Json, ['metadata']);
  if (body.metadata === undefined) throw invalid("'metadata' is required.", 'metadata');
  const id = String(req.params.id);
  const row = await updateConversationMetadata(req.auth!, id, checkMetadata(body.metadata));
  if (!row) throw conversationNotFound(id);
  res.json(conversationObject(row));
}

async function addItems(req: Request, res: Response): Promise<void> {
  const id = String(req.params.id);
  const include = includeOf(req);
  const sent = checkedItems(onlyFields((req.body ?? {}) as Json, ['items']).items, false);
  // found first: another project's conversation answers 404, not whether it holds an item id (nor whether a referenced item exists)
  await conversationOf(req);
  const items = await storedItems(req, sent);
  const [held] = await heldItemIds(req.auth!.orgId, id, items.map((it) => String(it.id)));
  if (held !== undefined) throw invalid(`The conversation already has an item with id '${held}'.`, 'items');
  if (!(await addConversationItems(req.auth!, id, items))) throw conversationNotFound(id);
  res.json(listOf(items.map((it) => shownItem(it, include)), false));
}

async function listItems(req: Request, res: Response): Promise<void> {
  const limit = pageLimit(req.query.limit);
  const order = queryOrder(req.query, 'desc');
  const after = queryText(req.query, 'after');
  const include = includeOf(req);
  await conversationOf(req);
  const page = await listConversationItems(req.auth!.orgId, String(req.params.id), { order, after, limit });
  res.json(listOf(page.items.map((it) => shownItem(it, include)), page.hasMore));
}

const pathItemNotFound = (id: string) => new ApiError(404, 'item_not_found', `Item with id '${id}' not found.`, { param: 'item_id' });

async function getItem(req: Request, res: Response): Promise<void> {
  const include = includeOf(req);
  await conversationOf(req);
  const item = await findConversationItem(req.auth!.orgId, String(req.params.id), String(req.params.itemId));
  if (!item) throw pathItemNotFound(String(req.params.itemId));
  res.json(shownItem(item, include));
}

async function deleteItem(req: Request, res: Response): Promise<void> {
  const row = await conversationOf(req);
  if (!(await deleteConversationItem(req.auth!.orgId, row.id, String(req.params.itemId)))) throw pathItemNotFound(String(req.params.itemId));
  res.json(conversationObject(row));
}

/**
 * OpenAI's Conversations API: `POST /v1/conversations`, `GET`, `POST` (metadata) and `DELETE
 * /v1/conversations/{id}`, `POST` and `GET /v1/conversations/{id}/items`, `GET` and `DELETE
 * /v1/conversations/{id}/items/{item_id}`; the org's own conversations only (another org's id is not
 * found, and so is another project's for a request with a project: store-scope.ts). A response made with `conversation` reads and extends one (api/routes/responses/conversation.ts).
 * The item routes take `include`: a reasoning item's `encrypted_content` is shown only when it asks, and so are an output_text part's logprobs and an input_image's image_url (responses/include.ts).
 */
export function conversationsRouter(_ctx: AppContext): Router {
  const r = Router();
  only(r, '/v1/conversations', { post: [requireJson, create] });
  only(r, '/v1/conversations/:id', {
    get: async (req, res) => void res.json(conversationObject(await conversationOf(req))),
    post: [requireJson, update],
    delete: async (req, res) => {
      const id = String(req.params.id);
      if (!(await deleteConversation(req.auth!, id))) throw conversationNotFound(id);
      res.json({ id, object: 'conversation.deleted', deleted: true });
    },
  });
  only(r, '/v1/conversations/:id/items', { post: [requireJson, addItems], get: listItems });
  only(r, '/v1/conversations/:id/items/:itemId', { get: getItem, delete: deleteItem });
  return r;
}
