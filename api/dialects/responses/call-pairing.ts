import { ApiError } from '../../../shared/errors/ApiError';
import type { CanonicalMessage } from '../canonical';
import type { ResponsesItem } from './request';

/**
 * OpenAI's refusal of a tool call output whose `call_id` names no call before it (in the history a
 * previous response or a conversation brings, or in the input): 400 `invalid_request_error`, `param:
 * "input"`, "No tool call found for function call output with call_id X." (its words as its API
 * answers them and clients quote them: continuedev issue 10092, microsoft/vscode issue 320060,
 * CLIProxyAPI issue 2368), before anything is sent, stored or billed. Before, such an output went
 * upstream as a tool message answering no call: refused in the upstream's words (400
 * `upstream_invalid_request`), or answered by a lenient one as if the call had been made.
 * `input`: the request's items as sent; with a `compaction` item the check is left out (the calls
 * before it are in its summary, and an output after it may answer one of them).
 */
export function refuseOutputWithoutCall(messages: CanonicalMessage[], input: string | ResponsesItem[] | undefined): void {
  if (Array.isArray(input) && input.some((i) => i?.type === 'compaction')) return;
  const calls = new Set<string>();
  for (const m of messages) {
    if (m.role === 'assistant') for (const c of m.tool_calls ?? []) calls.add(c.id);
    else if (m.role === 'tool' && !calls.has(String(m.tool_call_id))) {
      throw new ApiError(400, 'invalid_request', `No tool call found for function call output with call_id ${String(m.tool_call_id)}.`, { param: 'input' });
    }
  }
}

/**
 * The client-run calls whose output the next turn must bring, as OpenAI names each in its refusal
 * ("No tool output found for function call X.", "… custom tool call X.", "… apply patch call X.", "…
 * tool search call X.": its messages as clients and proxies match them, codex-lb's classifier among
 * them; "… local shell call X." as its API answered it in openai/openai-agents-python pull request
 * 1855, code null, param input; "… shell call X." as Azure OpenAI's Responses API answered it in
 * microsoft/agent-framework issue 8663). The gateway runs no shell itself (offered-tools.ts refuses
 * a hosted one), so every shell call is the client's to answer.
 */
const CALL_WORDS: Record<string, string> = {
  function_call: 'function call',
  custom_tool_call: 'custom tool call',
  apply_patch_call: 'apply patch call',
  shell_call: 'shell call',
  local_shell_call: 'local shell call',
};
function callWords(item: ResponsesItem | undefined): string | undefined {
  const type = item?.type;
  if (type === 'tool_search_call') return item?.execution === 'client' ? 'tool search call' : undefined;
  return typeof type === 'string' && Object.hasOwn(CALL_WORDS, type) ? CALL_WORDS[type] : undefined;
}

/** The calls a request's previous response left for it to answer (its output's client-run calls), noted by historyFor. */
const carriedOf = new WeakMap<object, ResponsesItem[]>();

export function noteCarriedCalls(body: object, output: unknown): void {
  const calls = (Array.isArray(output) ? (output as ResponsesItem[]) : []).filter((i) => callWords(i));
  if (calls.length) carriedOf.set(body, calls);
}

/**
 * OpenAI's refusal of a turn that leaves a call unanswered: a client-run call in the input, or in the
 * output of the response `previous_response_id` names (noteCarriedCalls), with no output of its
 * `call_id` anywhere in the request: 400 `invalid_request_error`, `param: "input"`, "No tool output
 * found for function call X." (its body as clients quote it: openai/openai-support-agent-demo issue 12
 * for a stateless input ending in a call, openai/openai-agents-python issue 1061 for a follow-up by
 * `previous_response_id` that brings none, router-for-me/CLIProxyAPI issue 2368; its code null,
 * openai/codex issue 5385, which the gateway's envelope, whose `code` is always a string, answers as
 * `invalid_request`), before anything is sent, stored or billed; on `POST /v1/responses/compact` too
 * (openai/openai-agents-python issue 2317: `responses.compact` of a `previous_response_id` whose
 * function call has no output yet), before anything is summarised or billed. Before, the gateway sent the call upstream with no result: a strict upstream
 * refused it in its words, a lenient one answered as if it had run. The calls a `conversation`'s
 * items hold are not checked (no such refusal of OpenAI's for a conversation was found), nor with a
 * `compaction` item in the input (the calls before it are in its summary).
 */
export function refuseCallWithoutOutput(messages: CanonicalMessage[], body: { input?: string | ResponsesItem[] }): void {
  const input = Array.isArray(body.input) ? body.input : [];
  if (input.some((i) => i?.type === 'compaction')) return;
  const answered = new Set(messages.filter((m) => m.role === 'tool').map((m) => String(m.tool_call_id)));
  for (const item of [...(carriedOf.get(body) ?? []), ...input]) {
    const words = callWords(item);
    const id = String(item.call_id ?? item.id);
    if (words && !answered.has(id)) throw new ApiError(400, 'invalid_request', `No tool output found for ${words} ${id}.`, { param: 'input' });
  }
}
