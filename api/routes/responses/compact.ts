import type { Request, Response } from 'express';
import Joi from 'joi';
import type { AppContext } from '../../context';
import { validate } from '../../validate';
import { ApiError } from '../../../shared/errors/ApiError';
import { decrypt, encrypt } from '../../../shared/crypto';
import { resolveChatModel } from '../../dispatch/chat';
import { isSummaryMessage, SUMMARY_PREFIX, summarise, summaryMessage } from '../../dispatch/summarise';
import { canonicalText, forModel, type CanonicalCompletion, type CanonicalMessage, type CanonicalRequest, type CanonicalUsage } from '../../dialects/canonical';
import { configurationKept, notePlaces, refuseUnhonoured, responsesToCanonical, type ResponsesItem, type ResponsesRequest } from '../../dialects/responses/request';
import { newId, responsesUsage } from '../../dialects/responses/response';
import { historyFor } from './conversation';
import { configurationAfter } from './configuration';
import { inputItem, responsesSchema } from './schema';
import { modelRequiredRefusal } from '../openai-words';
import { resolveItemReferences } from './item-reference';
import { refuseInvalidResponsesSchemas } from './request-schemas';
import { refuseCallWithoutOutput } from '../../dialects/responses/call-pairing';

/** A compaction item's `encrypted_content`: the summary with the org it was made for, sealed with the gateway's key (shared/crypto.ts). */
export function sealCompaction(orgId: string, summary: string): string {
  return encrypt(JSON.stringify({ o: orgId, s: summary }));
}

/** The summary a compaction item holds, or undefined when it was not sealed by this gateway for this org. */
function openCompaction(orgId: string, sealed: unknown): string | undefined {
  if (typeof sealed !== 'string') return undefined;
  try {
    const v = JSON.parse(decrypt(sealed)) as { o?: unknown; s?: unknown };
    return v.o === orgId && typeof v.s === 'string' ? v.s : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The request with its `compaction` input items opened into the user messages they stand for (for
 * the canonical request only: what is stored and listed keeps the items as sent). Before the latest
 * compaction item only user messages (and configuration updates, which stay in effect) are kept: the answers, tool calls and results (and earlier
 * compactions) are in its summary, as a compacted output keeps them (user messages, then the
 * compaction), so a client that appends items after a compaction without pruning sends no more than
 * one that prunes. An item this gateway did not seal for the caller's org is 400 naming it.
 */
export function openCompactions<T extends Pick<ResponsesRequest, 'input'>>(body: T, orgId: string): T {
  const input = body.input;
  if (!Array.isArray(input) || !input.some((i) => i?.type === 'compaction')) return body;
  let latest = input.length - 1;
  while (input[latest]?.type !== 'compaction') latest--;
  const opened: ResponsesItem[] = [];
  for (const [i, item] of input.entries()) {
    if (item.type !== 'compaction') {
      // a configuration update says nothing to the model: it stays in effect past the compaction (request.ts configuredBy)
      if (i > latest || ((item.type ?? 'message') === 'message' && item.role === 'user') || item.type === 'configuration_update') opened.push(item);
      continue;
    }
    const summary = openCompaction(orgId, item.encrypted_content);
    if (summary === undefined) {
      throw new ApiError(400, 'invalid_request', `'input[${i}]' is a compaction item whose encrypted_content this gateway did not make for this organization.`, { param: `input[${i}]` });
    }
    if (i === latest) opened.push({ type: 'message', role: 'user', content: SUMMARY_PREFIX + summary });
  }
  return Object.assign({}, body, { input: opened });
}

/**
 * `POST /v1/responses/compact`: every field of openai 7.60.0's ResponseCompactParams (and of the
 * vendored document's CompactResponseMethodPublicBody), typed as they type them: `model`; `input`
 * and/or `previous_response_id` (or a `conversation`) to compact; `instructions`; the hints
 * `prompt_cache_key` (at most 64 characters), `prompt_cache_retention`, `prompt_cache_options`,
 * `service_tier` and `image`. Other fields (Codex sends its `tools`, `reasoning`, `text`) are read
 * as `POST /v1/responses` reads them.
 */
const compactSchema = Joi.object({
  model: Joi.string().min(1).required(),
  input: Joi.alternatives(Joi.string().min(1), Joi.array().items(inputItem)).allow(null),
  previous_response_id: Joi.string().max(64).allow(null),
  // not in the compact body, but taken as POST /v1/responses takes it
  conversation: responsesSchema.extract('conversation'),
  instructions: Joi.string().allow('', null),
  prompt_cache_key: Joi.string().max(64).allow('', null),
  prompt_cache_retention: Joi.string().valid('in_memory', '24h').allow(null),
  prompt_cache_options: Joi.object({ mode: Joi.string().valid('implicit', 'explicit'), ttl: Joi.string().valid('30m') }).unknown(true).allow(null),
  service_tier: Joi.string().valid('auto', 'default', 'fast', 'flex', 'priority').allow(null),
  image: responsesSchema.extract('image'),
}).unknown(true);

/** A user message of the conversation as an item of the compacted output, as OpenAI's ItemField has it (an id, its status, its text; other parts are in the summary). */
function userItem(m: CanonicalMessage): Record<string, unknown> | undefined {
  const text = canonicalText(m.content);
  if (!text) return undefined;
  return { type: 'message', id: newId('msg'), role: 'user', status: 'completed', content: [{ type: 'input_text', text }] };
}

/**
 * `POST /v1/responses/compact` (`client.responses.compact`): the conversation (`previous_response_id`'s
 * history or the `conversation`'s items, then `input`) is summarised by the model, as a synchronous
 * chat request (lane, limits, usage, billed), and answered as OpenAI's CompactResource: the conversation's user messages, then
 * (when `configuration_update` items of the history or the input set anything) one such item with the configuration they leave in effect, then a
 * `compaction` item whose `encrypted_content` holds the summary sealed for the org. Sent back as input
 * (to `POST /v1/responses`, `input_tokens` or here again), the item stands for the conversation
 * before it. Nothing is stored.
 */
export function compactHandler(ctx: AppContext) {
  return async (req: Request, res: Response) => {
    const body = validate<ResponsesRequest>(compactSchema, req.body, 'invalid_request', false, modelRequiredRefusal);
    // the schemas of its `tools` (offered to the model in the summary pass: summarise.ts) and of its items' tools and formats (an
    // update's is kept in the compacted output), checked as POST /v1/responses checks them, before anything is looked up or billed
    // (OpenAI's check of `tools` here is inferred: its compact body does not type it, but Codex sends it, codex-rs's CompactionInput)
    refuseInvalidResponsesSchemas({ tools: body.tools, input: body.input });
    await resolveItemReferences(req, body);
    notePlaces(body.input);
    refuseUnhonoured(req.body);
    const resolved = await resolveChatModel(ctx, req, body.model, 'responses');
    const history = await historyFor(req, body);
    if (!history.length && !body.input?.length) throw new ApiError(400, 'invalid_request', "Nothing to compact: send 'input', 'previous_response_id' or both.", { param: 'input' });
    const asked = openCompactions(Object.assign({}, body, { input: body.input ?? [] }), req.auth!.orgId);
    const { canonical, turn } = responsesToCanonical(asked, history);
    // a client-run call of the input or of the previous response with no output: OpenAI's refusal (call-pairing.ts), before the summary is made or billed
    refuseCallWithoutOutput(canonical.messages, body);
    forModel(canonical, resolved.model.config);
    const { summary, usage } = await summarise(ctx, req, res, resolved, canonical, {});
    res.json({
      id: newId('resp'),
      object: 'response.compaction',
      created_at: Math.floor(Date.now() / 1000),
      output: [...keptUserItems([...history, ...turn]), ...kept(configurationKept(configurationAfter(body), newId('cu'))), compactionItem(req.auth!.orgId, summary)],
      usage: responsesUsage(usage),
      // CompactedResponse.image: the policy applied, when the request set one
      ...(body.image ? { image: { context_compression: 'disabled' } } : {}),
    });
  };
}

const kept = (item: ResponsesItem | undefined) => (item ? [item] : []);

/** The conversation's user messages as items of a compacted output (an earlier summary left out: the new one replaces it). */
export function keptUserItems(messages: CanonicalMessage[]): Array<Record<string, unknown>> {
  return keptUserMessages(messages).map(userItem).filter((i) => i !== undefined);
}

/** The user messages a compaction keeps: all of them but an earlier summary (the new one replaces it). */
export const keptUserMessages = (messages: CanonicalMessage[]): CanonicalMessage[] => messages.filter((m) => m.role === 'user' && !isSummaryMessage(m));

/** A `compaction` item holding `summary`, sealed for the org. */
export function compactionItem(orgId: string, summary: string): { type: 'compaction'; id: string; encrypted_content: string } {
  return { type: 'compaction', id: newId('cmp'), encrypted_content: sealCompaction(orgId, summary) };
}
