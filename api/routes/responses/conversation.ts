import type { Request } from 'express';
import { ApiError } from '../../../shared/errors/ApiError';
import { logger } from '../../../shared/logger';
import { addConversationItems, allConversationItems, findConversation } from '../../../shared/conversations/store';
import type { CanonicalMessage } from '../../dialects/canonical';
import { itemsToMessages, updatesIn, type ResponsesItem, type ResponsesRequest } from '../../dialects/responses/request';
import { carryConfiguration } from './configuration';
import { requestInputItems } from '../../dialects/responses/input-items';
import { storableCopy } from '../../../shared/http/json-checks';
import { openCompactions } from './compact';
import { historyOf } from './store';
import { noteCarriedCalls } from '../../dialects/responses/call-pairing';

export const conversationNotFound = (id: string) => new ApiError(404, 'conversation_not_found', `Conversation with id '${id}' not found.`, { param: 'conversation_id' });

/** The conversation a request names (`conversation`: its id, or `{id}`), if any. */
export function conversationIdOf(body: Pick<ResponsesRequest, 'conversation'>): string | undefined {
  const c = body.conversation;
  if (!c) return undefined;
  return typeof c === 'string' ? c : c.id;
}

/**
 * A conversation's items as the canonical history a response continues. Hosted web search calls are
 * left out (the assistant's message after them carries what they found, and no upstream takes them),
 * and so is the reasoning of a turn that only searched (the reasoning item right before a search
 * call): its signed thinking goes with the search, not with the message after it. Other reasoning
 * items with an Anthropic-native turn's signed thinking go back as its thinking blocks (request.ts).
 */
export function conversationMessages(items: Array<Record<string, unknown>>, orgId: string): CanonicalMessage[] {
  const searching = (i: number) => items[i].type === 'web_search_call' || (items[i].type === 'reasoning' && items[i + 1]?.type === 'web_search_call');
  return itemsToMessages(openCompactions({ input: items.filter((_, i) => !searching(i)) as ResponsesItem[] }, orgId).input as ResponsesItem[]);
}

/**
 * The history a request continues: the items of the conversation it names (404 when the org has no
 * such conversation), or the stored conversation of its `previous_response_id`; not both (400). The
 * settings the history's `configuration_update` items left in effect are carried into the request
 * (configuration.ts): the items of the conversation, the chain's kept with the previous response.
 * The calls the previous response left unanswered are noted for the request's check (call-pairing.ts).
 */
export async function historyFor(req: Request, body: ResponsesRequest): Promise<CanonicalMessage[]> {
  const id = conversationIdOf(body);
  if (!id) {
    const previous = await historyOf(req, body.previous_response_id);
    carryConfiguration(body, previous.configuration);
    noteCarriedCalls(body, previous.output);
    return previous.messages;
  }
  if (body.previous_response_id) {
    throw new ApiError(400, 'invalid_request', "'previous_response_id' and 'conversation' cannot both be given: a conversation carries its own history.", { param: 'conversation' });
  }
  if (!(await findConversation(req.auth!, id))) throw conversationNotFound(id);
  const items = await allConversationItems(req.auth!.orgId, id);
  carryConfiguration(body, updatesIn(items as ResponsesItem[]));
  return conversationMessages(items, req.auth!.orgId);
}

/**
 * A response made with `conversation` that completed (or was cut short) adds its input items and then
 * its output items to the conversation, as OpenAI's does "after this response completes"; a failed one
 * adds nothing. Its output items are kept as built, whole: an Anthropic-native turn's signed thinking
 * is its reasoning item's `encrypted_content` whether or not `include` asked for it (response.ts,
 * reasoningItem), so the conversation's next turn sends it back. A failure to add is logged: the answer was made and billed.
 */
export async function recordInConversation(req: Request, body: ResponsesRequest, response: Record<string, unknown>): Promise<void> {
  const id = conversationIdOf(body);
  if (!id || (response.status !== 'completed' && response.status !== 'incomplete')) return;
  const items = storableCopy([...requestInputItems(body), ...((response.output as Array<Record<string, unknown>>) ?? [])]);
  await addConversationItems(req.auth!, id, items).catch((err: unknown) => logger.warn({ err, conversationId: id }, 'response not added to its conversation'));
}
