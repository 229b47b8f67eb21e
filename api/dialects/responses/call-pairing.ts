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
