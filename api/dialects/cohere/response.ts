import type { CanonicalCompletion, CanonicalUsage, FinishReason } from '../canonical';
import { matchedStop } from '../messages/response';

type Json = Record<string, unknown>;

/**
 * Cohere's ChatFinishReason for a canonical finish: `stop` is COMPLETE, or STOP_SEQUENCE when the
 * upstream said one of the caller's stop sequences ended it (`matched`: vLLM's `stop_reason`; OpenAI's
 * API does not say, so its stops are COMPLETE); `length` MAX_TOKENS, `tool_calls` TOOL_CALL, a
 * content filter ERROR.
 */
export function cohereFinish(finish: FinishReason | undefined, matched: string | null): string {
  if (finish === 'length') return 'MAX_TOKENS';
  if (finish === 'tool_calls' || finish === 'function_call') return 'TOOL_CALL';
  if (finish === 'content_filter') return 'ERROR';
  return matched ? 'STOP_SEQUENCE' : 'COMPLETE';
}

/** Cohere's Usage: the tokens billed and the tokens counted (the same here), and the cached input tokens. */
export function cohereUsage(u: CanonicalUsage | null | undefined): Json {
  const input = u?.prompt_tokens ?? 0;
  const output = u?.completion_tokens ?? 0;
  return { billed_units: { input_tokens: input, output_tokens: output }, tokens: { input_tokens: input, output_tokens: output }, cached_tokens: u?.prompt_tokens_details?.cached_tokens ?? 0 };
}

/**
 * A canonical completion as Cohere's ChatResponseV2: `id` (the service request id), `finish_reason`,
 * `message` (`role: "assistant"`; the text as `content`, one text part, or, when the model called
 * tools, as `tool_plan`, where Cohere puts the text it writes before its calls (AssistantMessageResponse,
 * "a chain-of-thought style reflection and plan that the model generates when working with Tools");
 * `tool_calls` as OpenAI's with `type: "function"`), `usage`.
 */
export function canonicalToCohere(result: CanonicalCompletion, id: string, stopSequences?: string[]): Json {
  const choice = result.choices?.[0];
  const m = choice?.message ?? {};
  const text = m.content ?? '';
  const message: Json = { role: 'assistant' };
  if (text && m.tool_calls?.length) message.tool_plan = text;
  else if (text) message.content = [{ type: 'text', text }];
  if (m.tool_calls?.length) message.tool_calls = m.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.function.name, arguments: c.function.arguments } }));
  return { id, finish_reason: cohereFinish(choice?.finish_reason, matchedStop(choice, stopSequences)), message, usage: cohereUsage(result.usage) };
}
