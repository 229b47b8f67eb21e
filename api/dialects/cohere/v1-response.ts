import type { CanonicalCompletion, CanonicalToolCall, CanonicalUsage, FinishReason } from '../canonical';
import { matchedStop } from '../messages/response';
import type { CohereV1ChatRequest, CohereV1Message, CohereV1ToolCall } from './v1-request';

type Json = Record<string, unknown>;

/** The ids a v1 answer carries (uuids, as Cohere's document has them). */
export interface V1Ids {
  responseId: string;
  generationId: string;
}

/** Cohere's v1 FinishReason: `length` MAX_TOKENS, a content filter ERROR_TOXIC, a caller's stop sequence STOP_SEQUENCE, else COMPLETE (tool calls too). */
export function v1Finish(finish: FinishReason | undefined, matched: string | null): string {
  if (finish === 'length') return 'MAX_TOKENS';
  if (finish === 'content_filter') return 'ERROR_TOXIC';
  return matched ? 'STOP_SEQUENCE' : 'COMPLETE';
}

/** v1's ApiMeta: the version, the tokens billed and counted (the same here). */
export function v1Meta(u: CanonicalUsage | null | undefined): Json {
  const input = u?.prompt_tokens ?? 0;
  const output = u?.completion_tokens ?? 0;
  return { api_version: { version: '1' }, billed_units: { input_tokens: input, output_tokens: output }, tokens: { input_tokens: input, output_tokens: output } };
}

/** A canonical tool call as v1's (no id; its parameters an object). */
export function v1ToolCall(c: Pick<CanonicalToolCall, 'function'>): CohereV1ToolCall {
  let parameters: Json = {};
  try {
    const v = JSON.parse(c.function.arguments || '{}') as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) parameters = v as Json;
  } catch {
    // arguments that are not JSON: none (the document has parameters as an object)
  }
  return { name: c.function.name, parameters };
}

/**
 * v1's NonStreamedChatResponse: `text` (a tool plan when the model only called tools: toolPlan), `generation_id`, `response_id`, `finish_reason`, `tool_calls`
 * (when the model called tools), `chat_history` (the request's history, its `message` as a USER turn
 * when not empty, and this answer as a CHATBOT turn: what the caller sends back next time), `meta`.
 */
export function v1Response(req: CohereV1ChatRequest, ids: V1Ids, said: string, calls: CohereV1ToolCall[], finish: string, usage: CanonicalUsage | null | undefined): Json {
  const text = said || toolPlan(calls);
  const answer: CohereV1Message = { role: 'CHATBOT', message: text };
  if (calls.length) answer.tool_calls = calls;
  const history: CohereV1Message[] = [...(req.chat_history ?? [])];
  if (req.message) history.push({ role: 'USER', message: req.message });
  history.push(answer);
  const out: Json = { response_id: ids.responseId, text, generation_id: ids.generationId, chat_history: history, finish_reason: finish, meta: v1Meta(usage) };
  if (calls.length) out.tool_calls = calls;
  return out;
}

/**
 * The text of an answer that only called tools: Cohere's models write a tool plan there, and its
 * document has `text` (and a CHATBOT turn's `message`) never empty; an upstream that wrote none gets
 * this one.
 */
export function toolPlan(calls: CohereV1ToolCall[]): string {
  return calls.length ? `I will use ${[...new Set(calls.map((c) => c.name))].join(', ')}.` : '';
}

/** A canonical completion as v1's NonStreamedChatResponse. */
export function canonicalToCohereV1(result: CanonicalCompletion, req: CohereV1ChatRequest, ids: V1Ids): Json {
  const choice = result.choices?.[0];
  const calls = (choice?.message.tool_calls ?? []).map(v1ToolCall);
  return v1Response(req, ids, choice?.message.content ?? '', calls, v1Finish(choice?.finish_reason, matchedStop(choice, req.stop_sequences)), result.usage);
}
