import { callId } from './call-ids';
import { isRecord } from '../../../shared/is-record';
import { optRecord, optRecords, tokenCount } from '../shape';
import { chatLogprobs, type GeminiLogprobs, type LogprobsAsk } from './logprobs';

type Part = Record<string, unknown> & { text?: string; thought?: boolean; thoughtSignature?: string; functionCall?: { id?: string; name?: string; args?: unknown } };
/** A Candidate: `index` is its place among `candidateCount` (absent for the first one, as proto3 JSON leaves out a 0). */
export type GeminiCandidate = { content?: { parts?: Part[] }; finishReason?: string; index?: number; logprobsResult?: GeminiLogprobs };
export type GeminiResponse = {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsage;
  responseId?: string;
};
export type GeminiUsage = {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
};

/**
 * A GenerateContentResponse of the documented shape, as far as it is read: candidates (if any) objects,
 * each one's content an object whose parts are objects (a function call an object); promptFeedback
 * and usageMetadata objects if any.
 */
export function wellFormedResponse(r: unknown): r is GeminiResponse {
  if (!isRecord(r) || !optRecords(r.candidates) || !optRecord(r.promptFeedback) || !optRecord(r.usageMetadata)) return false;
  return ((r.candidates as Record<string, unknown>[] | null | undefined) ?? []).every((c) => {
    if (!optRecord(c.content)) return false;
    const parts = (c.content as Record<string, unknown> | null | undefined)?.parts;
    return optRecords(parts) && ((parts as Record<string, unknown>[] | null | undefined) ?? []).every((p) => optRecord(p.functionCall));
  });
}

/** FinishReasons (@google/genai) that mean the answer was withheld or cut by a filter or policy. */
const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION', 'LANGUAGE', 'ESCALATION', 'MODEL_ARMOR']);

/** finishReason → finish_reason; a turn that ends on function calls is `tool_calls`, as in OpenAI's API. */
export function finishReason(reason: string | undefined, calledTools: boolean, blocked = false): 'stop' | 'length' | 'tool_calls' | 'content_filter' {
  if (blocked || (reason && FILTERED.has(reason))) return 'content_filter';
  if (reason === 'MAX_TOKENS') return 'length';
  return calledTools ? 'tool_calls' : 'stop'; // STOP, OTHER, MALFORMED_FUNCTION_CALL, ...
}

/**
 * usageMetadata → OpenAI usage. promptTokenCount already includes the cached part
 * (cachedContentTokenCount); thoughts are output billed apart from candidatesTokenCount, and are
 * part of completion_tokens in OpenAI's usage (with `reasoning_tokens` saying how many).
 */
export function chatUsage(u: GeminiUsage | undefined) {
  // a count that is not one (a string of digits is read as its number; negative or not a number: none) counts 0 (shape.ts)
  const prompt = (tokenCount(u?.promptTokenCount) ?? 0) + (tokenCount(u?.toolUsePromptTokenCount) ?? 0);
  const reasoning = tokenCount(u?.thoughtsTokenCount) ?? 0;
  const completion = (tokenCount(u?.candidatesTokenCount) ?? 0) + reasoning;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: tokenCount(u?.cachedContentTokenCount) ?? 0 },
    completion_tokens_details: { reasoning_tokens: reasoning },
  };
}

/** One function call part → a canonical tool call: Gemini's `functionCall.id` when it sent one, else a fresh id. */
export function toolCall(p: Part): { id: string; type: 'function'; function: { name: string; arguments: string } } {
  return { id: callId(p.thoughtSignature, p.functionCall!.id), type: 'function', function: { name: String(p.functionCall!.name ?? ''), arguments: JSON.stringify(p.functionCall!.args ?? {}) } };
}

/** A candidate's choice index: its `index`, else its place in the list. */
export const candidateIndex = (c: GeminiCandidate, at: number): number => (typeof c.index === 'number' && Number.isInteger(c.index) && c.index >= 0 ? c.index : at);

/** A candidate's parts split into answer text, thought text and function calls. */
export function splitParts(parts: Part[] | undefined) {
  let text = '';
  let reasoning = '';
  const calls: Part[] = [];
  for (const p of parts ?? []) {
    if (p.functionCall) calls.push(p);
    else if (typeof p.text === 'string') {
      if (p.thought) reasoning += p.text;
      else text += p.text;
    }
  }
  return { text, reasoning, calls };
}

/** One candidate → a chat choice (its own text, thoughts, tool calls, finish reason and log probabilities). */
function choiceOf(cand: GeminiCandidate | undefined, index: number, blocked: boolean, ask: LogprobsAsk): Record<string, unknown> {
  const { text, reasoning, calls } = splitParts(cand?.content?.parts);
  const toolCalls = calls.map(toolCall);
  const message: Record<string, unknown> = { role: 'assistant', content: text || (toolCalls.length ? null : '') };
  if (reasoning) message.reasoning_content = reasoning;
  if (toolCalls.length) message.tool_calls = toolCalls;
  return { index, message, logprobs: chatLogprobs(cand?.logprobsResult, ask), finish_reason: finishReason(cand?.finishReason, toolCalls.length > 0, blocked) };
}

/**
 * A GenerateContentResponse → a canonical chat completion with the public model id: each candidate
 * (`candidateCount`, the request's `n`) one choice at its index; usage as Gemini counts it, once for all.
 */
export function geminiToCompletion(r: GeminiResponse, publicModel: string, ask?: LogprobsAsk): Record<string, unknown> {
  const cands = r.candidates ?? [];
  const choices = cands.length
    ? cands.map((c, at) => choiceOf(c, candidateIndex(c, at), false, ask)).sort((a, b) => (a.index as number) - (b.index as number))
    : [choiceOf(undefined, 0, !!r.promptFeedback?.blockReason, ask)];
  return {
    id: `chatcmpl-${r.responseId ?? callId().slice(5)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: publicModel,
    choices,
    usage: chatUsage(r.usageMetadata),
  };
}
