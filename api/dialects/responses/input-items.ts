import { newId, outputText } from './response';
import type { ResponsesItem } from './request';

const prefixes: Record<string, string> = { message: 'msg', function_call: 'fc', function_call_output: 'fco', custom_tool_call: 'ctc', custom_tool_call_output: 'ctco', apply_patch_call: 'apc', apply_patch_call_output: 'apco', shell_call: 'sh', shell_call_output: 'sho', local_shell_call: 'lsh' };

/**
 * Item types whose listed form always has a `status` (OpenAI's FunctionToolCallResource and
 * FunctionToolCallOutputResource, in a conversation's items and a response's input items: "Populated
 * when items are returned via API").
 */
const LISTED_WITH_STATUS = new Set(['function_call', 'function_call_output']);

/**
 * A request's `input` as OpenAI's input item list shows it: a string is one user message; a
 * message's string content is one `input_text` part (`output_text` for an assistant turn); every
 * item has an `id` (the caller's, or a new one), and a message, a function call and a function call
 * output their `status` (the caller's, else `completed`); a message keeps its `phase`.
 */
export function inputItemsOf(input: string | ResponsesItem[]): Array<Record<string, unknown>> {
  const items: ResponsesItem[] = typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : input;
  return items.map((i) => {
    const type = i.type ?? 'message';
    const id = typeof i.id === 'string' && i.id ? i.id : newId(prefixes[type] ?? 'item');
    if (type !== 'message') {
      const item: Record<string, unknown> = { ...i, id };
      if (LISTED_WITH_STATUS.has(type) && item.status == null) item.status = 'completed';
      return item;
    }
    const content = typeof i.content === 'string' ? [i.role === 'assistant' ? outputText(i.content) : { type: 'input_text', text: i.content }] : i.content;
    const listed: Record<string, unknown> = { id, type, role: i.role, status: i.status ?? 'completed', content };
    // an assistant message's `phase` (OpenAI's ResponseOutputMessage: commentary or final_answer), kept as sent
    if (typeof i.phase === 'string') listed.phase = i.phase;
    return listed;
  });
}

const ofRequest = new WeakMap<object, Array<Record<string, unknown>>>();

/**
 * A request's input items (inputItemsOf), made once per request object: the stored response's
 * input_items and its conversation's items then carry the same generated ids.
 */
export function requestInputItems(request: { input?: string | ResponsesItem[] }): Array<Record<string, unknown>> {
  let items = ofRequest.get(request);
  if (!items) ofRequest.set(request, (items = inputItemsOf(request.input ?? [])));
  return items;
}
