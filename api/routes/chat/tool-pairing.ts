import type Joi from 'joi';

/**
 * OpenAI's refusals of a chat conversation whose tool calls and tool messages do not pair up (400
 * invalid_request_error, code null, param `messages.[N].role`, in its words as clients quote them:
 * CLIProxyAPI issue 2798, litellm issue 10083, smarter issue 264, morphic issue 136): an assistant
 * message's `tool_calls` not each answered by the `tool` messages right after it (N the assistant
 * message's index), and a `tool` message not among those answering an assistant message with
 * `tool_calls` (N its own index; "preceeding" is OpenAI's spelling). A final assistant message with
 * tool calls is left alone, as the messages dialect leaves a prefill. Checked on the chat route's
 * input only: the canonical chat bodies other dialects build are not the caller's to fix.
 */
type Message = { role: string; tool_calls?: Array<{ id: string }> | null; tool_call_id?: string };

const MISSING = "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ";
const ORPHAN = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";

/** The first pairing problem, in the order of the messages: its message and index, or undefined. */
export function unpairedToolCall(messages: Message[]): { message: string; index: number } | undefined {
  let open = false; // inside the run of tool messages after an assistant message with tool calls
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === 'tool') {
      if (!open) return { message: ORPHAN, index: i };
      continue;
    }
    open = m.role === 'assistant' && !!m.tool_calls?.length;
    if (!open || i === messages.length - 1) continue;
    const answered = new Set<string>();
    for (let j = i + 1; j < messages.length && messages[j].role === 'tool'; j++) answered.add(String(messages[j].tool_call_id));
    const missing = m.tool_calls!.map((c) => c.id).filter((id) => !answered.has(id));
    if (missing.length) return { message: MISSING + missing.join(', '), index: i };
  }
  return undefined;
}

/** The rule as a Joi custom check of `messages` (schema.ts), naming its param as OpenAI does. */
export function toolCallsPaired(messages: Message[], helpers: Joi.CustomHelpers): Message[] | Joi.ErrorReport {
  const problem = unpairedToolCall(messages);
  return problem ? helpers.error('toolCalls.unpaired', { message: problem.message, param: `messages.[${problem.index}].role` }) : messages;
}

export const toolCallPairingMessages = { 'toolCalls.unpaired': '{#message}' };
