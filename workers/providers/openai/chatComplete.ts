import { randomUUID } from 'crypto';
import { openaiApi, openaiEndpoint, type OpenAiEndpoint } from './api';
import { presetAnswer, presetRequest } from './preset';
import { fetchUpstream } from '../http';
import { readSseBatches } from '../sse';
import { rewriteChunk } from './chunk-rewrite';
import { indexChoices, StreamIndexes } from './stream-indexes';
import { estimateUsage, openaiUsage, streamFrame } from './usage-estimate';
import type { Emit, TokenUsage, UpstreamCall } from '../types';
import { errors } from '../../../shared/errors/codes';
import { presetOf } from '../../../shared/catalog/presets';
import { isRecord } from '../../../shared/is-record';
import { isRecords, optRecord, optRecords, tokenCount } from '../shape';
import { refuseFileUrls } from './refuse';
import { strictWhereTaken } from './strict-fallback';
import { withoutAnthropicThinking } from '../anthropic/thinking';
import { openAiToolResults } from '../tool-results';

export interface ChatOutcome {
  /** The full response (non-streamed), `model` already set to the public id. */
  response?: Record<string, unknown>;
  usage: TokenUsage;
  /** A streamed answer's usage object as its final usage chunk reported it (cached and reasoning tokens for the request log). */
  streamedUsage?: unknown;
  /**
   * The tier the upstream reports it served the request on, asked or not (its answer's or chunks'
   * `service_tier`: OpenAI's API document, CreateChatCompletionResponse.service_tier and
   * CreateChatCompletionStreamResponse.service_tier, a ServiceTier: "the response body will include
   * the `service_tier` value based on the processing mode actually used"): what the usage is priced
   * at (workers/pools/service-tier.ts). Read only when the call asks it (`call.readsTier`: a step
   * whose model prices tiers), so an answer of any other model costs nothing more.
   */
  servedTier?: string;
}

/** A streamed chunk's `service_tier`, read from its text (a plain chunk is passed on unparsed). */
const SERVICE_TIER = /"service_tier"\s*:\s*"([^"\\]+)"/;

interface OpenAiUsage {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
}

/**
 * The usage an upstream reported, or undefined when it reported none: no usage object, or one whose
 * counts are absent or not counts (negative, fractional, `NaN`, an object: shape.ts tokenCount), so
 * the answer is billed by an estimate (usage-estimate.ts) rather than as nothing or as a credit. A
 * count written as a string of digits is read as its number.
 */
function usageOf(u: OpenAiUsage | undefined | null): TokenUsage | undefined {
  if (!u) return undefined;
  const i = u.prompt_tokens;
  const o = u.completion_tokens;
  if (i == null && o == null) return undefined;
  const inputTokens = i == null ? 0 : tokenCount(i);
  const outputTokens = o == null ? 0 : tokenCount(o);
  return inputTokens === undefined || outputTokens === undefined ? undefined : { inputTokens, outputTokens };
}

/**
 * The usage-only chunk that closes a stream (`choices: []`), as OpenAI sends it when asked for
 * `include_usage`: with the stream's `id` and `created` when known, else its own.
 */
function usageChunk(operation: 'chat' | 'completions', publicModel: string, frame: { id?: unknown; created?: unknown }, usage: unknown): string {
  const chat = operation === 'chat';
  const id = frame.id ?? `${chat ? 'chatcmpl' : 'cmpl'}-${randomUUID().replace(/-/g, '')}`;
  const created = frame.created ?? Math.floor(Date.now() / 1000);
  return JSON.stringify({ id, object: chat ? 'chat.completion.chunk' : 'text_completion', created, model: publicModel, choices: [], usage });
}

/** The message of an in-band error chunk, capped. */
function upstreamMessage(error: object): string {
  const m = (error as { message?: unknown }).message;
  return (typeof m === 'string' && m ? m : JSON.stringify(error)).slice(0, 500);
}

/** Tool calls as a message (`fn`: each has its function object) or a delta (its function may come later) carries them. */
function toolCallsOk(calls: unknown, fn: boolean): boolean {
  return optRecords(calls) && (!Array.isArray(calls) || (calls as Record<string, unknown>[]).every((c) => (fn ? isRecord(c.function) : optRecord(c.function))));
}

/**
 * Tool calls whose `function.arguments` came as a JSON value (some OpenAI-compatible servers send the
 * object) get its JSON text, as OpenAI's wire has it: the dialects read the text (the messages
 * dialect's `input` parse threw on an object: a 500). `calls` already passed toolCallsOk.
 */
function argumentsAsText(calls: unknown): void {
  if (!Array.isArray(calls)) return;
  for (const c of calls as Array<{ function?: { arguments?: unknown } | null }>) {
    const f = c.function;
    if (f && f.arguments != null && typeof f.arguments !== 'string') f.arguments = JSON.stringify(f.arguments);
  }
}

/**
 * A message's or delta's `content` that came as content parts (some OpenAI-compatible servers answer
 * `[{type: "text", text}]`, as a request may send it) becomes its text, as OpenAI's wire has the
 * assistant's content: the dialects read a string (the messages dialect wrote "[object Object]").
 * Parts other than text carry no answer text and are left out; a string or null is left alone.
 */
function contentAsText(holder: Record<string, unknown> | null | undefined): void {
  const c = holder?.content;
  if (c === undefined || c === null || typeof c === 'string') return;
  const parts = Array.isArray(c) ? c : [c];
  holder!.content = parts.map((p) => (isRecord(p) && typeof p.text === 'string' ? p.text : typeof p === 'string' ? p : '')).join('');
}

/**
 * A JSON answer of the shape the dialects read: an object whose `choices` is an array of objects,
 * each with its `message` object (chat) and that message's tool calls objects; `usage` an object if any.
 */
function wellFormedAnswer(json: unknown, operation: 'chat' | 'completions'): json is Record<string, unknown> {
  if (!isRecord(json) || !isRecords(json.choices) || !optRecord(json.usage)) return false;
  return operation === 'completions' || json.choices.every((c) => isRecord(c.message) && toolCallsOk(c.message.tool_calls, true));
}

/** A streamed chunk of that shape: `choices` (when present) objects, each `delta` (when present) an object and its tool calls objects. */
function wellFormedChunk(chunk: unknown): chunk is Record<string, unknown> {
  if (!isRecord(chunk) || !optRecords(chunk.choices) || !optRecord(chunk.usage)) return false;
  return ((chunk.choices as Record<string, unknown>[] | null | undefined) ?? []).every((c) => optRecord(c.delta) && toolCallsOk((c.delta as Record<string, unknown> | undefined)?.tool_calls, false));
}

/**
 * Chat completions or legacy completions against an OpenAI-compatible upstream. The body is sent
 * as the caller wrote it (unknown fields included) with the upstream model name swapped in; answers
 * get the public model id back. Streams always ask the upstream for usage (for metering) and drop
 * the usage-only chunk when the caller did not ask for it; usage a service sends inside its last
 * content chunk is moved to a usage-only chunk of its own, as OpenAI sends it. An upstream that
 * reports no usage is billed by an estimate (usage-estimate.ts), which the caller gets where OpenAI
 * would give usage: `usage` of a JSON answer, the usage chunk of a stream that asked for it. A provider's
 * `preset` (an OpenAI-compatible service) adapts the chat body and answers to that service;
 * `endpoint` is where and how to call (another kind speaking OpenAI's wire format brings its own).
 */
export async function chatComplete(
  call: UpstreamCall,
  operation: 'chat' | 'completions',
  body: Record<string, unknown>,
  publicModel: string,
  stream: { emit: Emit; includeUsage: boolean } | undefined,
  endpoint: OpenAiEndpoint = openaiEndpoint,
): Promise<ChatOutcome> {
  if (operation === 'chat') {
    refuseFileUrls(body);
    // Anthropic's signed thinking blocks (LiteLLM's `thinking_blocks`) and the messages dialect's `thinking` are for Claude upstreams only
    body = withoutAnthropicThinking(body);
    // tool results' images are the user message's parts here, a failed result's flag its text's `Error: ` (tool-results.ts)
    body = openAiToolResults(body);
    // the messages dialect's strict schemas that OpenAI's strict mode refuses go non-strict (strict-fallback.ts)
    body = strictWhereTaken(body);
  }
  const preset = presetOf(call.settings?.preset);
  const sent = preset && operation === 'chat' ? presetRequest(call.settings!.preset!, preset, body) : body;
  // `model` named first and set after the caller's fields: a spread followed by a key would give every
  // body a hidden class of its own (shared/merged.ts); Object.assign would read an own `__proto__` key
  const upstreamBody: Record<string, unknown> = { model: undefined, ...sent };
  upstreamBody.model = call.upstreamModel;
  // `store: true` is kept by the gateway (stored completions, api/routes/chat/stored.ts), not by the
  // upstream under the platform's account: `store` and the `metadata` that goes with it stay here
  if ('store' in upstreamBody) {
    delete upstreamBody.store;
    delete upstreamBody.metadata;
  }
  if (stream) {
    upstreamBody.stream = true;
    // a service that reports usage in its last chunk unasked, or an API version without the field (billed by an estimate, below)
    if (preset?.streamUsage === 'last_chunk' || endpoint.streamOptions?.(call) === false) delete upstreamBody.stream_options;
    else upstreamBody.stream_options = { ...((body.stream_options as object) ?? {}), include_usage: true };
  } else {
    delete upstreamBody.stream;
    delete upstreamBody.stream_options;
  }
  const res = await fetchUpstream(
    endpoint.url(call, operation === 'chat' ? openaiApi.paths.chat : openaiApi.paths.completions),
    { method: 'POST', headers: endpoint.headers(call), body: JSON.stringify(upstreamBody) },
    { signal: call.signal, deadline: call.deadline, callerKey: call.callerKey, retries: call.retries, firstByteTimeoutMs: call.firstByteTimeoutMs, errorHints: endpoint.errorHints, conversation: true },
  );

  if (!stream) {
    let json: unknown;
    try {
      json = await res.json();
    } catch {
      throw errors.upstreamError('The upstream answered with a malformed body.');
    }
    // valid JSON of another shape (`null`, a choice that is not an object...) is as malformed: refused before any field is read
    if (!wellFormedAnswer(json, operation)) throw errors.upstreamError('The upstream answered with a malformed body.');
    if (operation === 'chat') {
      for (const c of json.choices as Array<{ message: Record<string, unknown> }>) {
        argumentsAsText(c.message.tool_calls);
        contentAsText(c.message);
      }
    }
    json.model = publicModel;
    indexChoices(json);
    if (preset) presetAnswer(preset, json);
    const reported = usageOf(json.usage as OpenAiUsage);
    const outcome: ChatOutcome = { response: json, usage: reported ?? { inputTokens: 0, outputTokens: 0 } };
    if (call.readsTier && typeof json.service_tier === 'string') outcome.servedTier = json.service_tier;
    if (reported) return outcome;
    // an answer without usage is billed by an estimate, not as nothing, and carries it as OpenAI's answers carry usage (usage-estimate.ts)
    const estimate = await estimateUsage(upstreamBody, [json], call);
    outcome.usage = estimate;
    // audio tokens in the details OpenAI reports them in: billed at the audio price, the rest at the text price (audio-price.ts)
    json.usage = openaiUsage(estimate);
    return outcome;
  }

  if (!res.body) throw errors.upstreamError('The upstream sent no stream.');
  let usage: TokenUsage = { inputTokens: 0, outputTokens: 0 };
  let inlineUsage: { frame: { id?: unknown; created?: unknown }; usage: unknown } | undefined;
  let streamedUsage: unknown;
  // the tier served, when the call reads it: the first chunk naming it (OpenAI's name it on every one)
  let servedTier: string | undefined;
  const readsTier = call.readsTier === true;
  /** What went to the caller, for an estimate when the upstream reports no usage (usage-estimate.ts). */
  const emitted: string[] = [];
  // A plain content chunk goes on with only its model rewritten (chunk-rewrite.ts); a preset's answers are adapted in full,
  // and so is a chunk holding a `"type"` key (content parts, tool calls): they are read and rewritten.
  const modelField = preset ? undefined : `"model":${JSON.stringify(publicModel)}`;
  // choices and tool calls an upstream left unnumbered are numbered (stream-indexes.ts): a chunk with
  // tool calls, or without any index, takes the full path
  const indexes = new StreamIndexes();
  // the events of one upstream read together: one await a read, not one an event (sse.ts)
  events: for await (const batch of readSseBatches(res.body, (e) => e.data.trim() === '[DONE]')) {
    for (const ev of batch) {
      const data = ev.data.trim();
      if (data === '[DONE]') break events;
      if (readsTier && servedTier === undefined) servedTier = SERVICE_TIER.exec(data)?.[1];
      // a `"type"` key is a content part or a tool call (contentAsText, argumentsAsText): the full path
      const rewritten = modelField && data.includes('"index"') && !data.includes('"tool_calls"') && !data.includes('"type"') && rewriteChunk(data, modelField, stream.includeUsage);
      if (rewritten) {
        emitted.push(rewritten);
        stream.emit(rewritten);
        continue;
      }
      let chunk: unknown;
      try {
        chunk = JSON.parse(data);
      } catch {
        throw errors.upstreamError('The upstream sent a malformed stream event.');
      }
      // valid JSON of another shape (`data: null`, `data: 5`, a choice that is not an object) is as malformed
      if (!isRecord(chunk)) throw errors.upstreamError('The upstream sent a malformed stream event.');
      // vLLM (and others) report a failure after the stream started as `data: {"error": {...}}`, then
      // `[DONE]`: a failure like a dropped connection, so each dialect ends with its own error event.
      if (chunk.error && typeof chunk.error === 'object') throw errors.upstreamError(`The upstream failed mid-stream: ${upstreamMessage(chunk.error)}`);
      if (!wellFormedChunk(chunk)) throw errors.upstreamError('The upstream sent a malformed stream event.');
      indexes.apply(chunk);
      if (chunk.choices) {
        for (const c of chunk.choices as Array<{ delta?: Record<string, unknown> | null }>) {
          argumentsAsText(c.delta?.tool_calls);
          contentAsText(c.delta);
        }
      }
      if (preset) presetAnswer(preset, chunk);
      const u = usageOf(chunk.usage as OpenAiUsage);
      if (u) [usage, streamedUsage] = [u, chunk.usage];
      const choices = chunk.choices as unknown[] | undefined;
      const usageOnly = !choices || choices.length === 0;
      if (!u && chunk.usage != null) {
        // usage without counts (usageOf): not passed on; the stream is billed by the estimate below, which the caller gets instead
        if (usageOnly) continue;
        delete chunk.usage;
      }
      if (u && usageOnly && !stream.includeUsage) continue; // usage-only chunk the caller did not ask for
      if (u && !usageOnly) inlineUsage = { frame: { id: chunk.id, created: chunk.created }, usage: chunk.usage };
      else if (u) inlineUsage = undefined; // the service sent its own usage-only chunk after all
      if ('usage' in chunk && (!stream.includeUsage || (u && !usageOnly))) delete chunk.usage;
      chunk.model = publicModel;
      const text = JSON.stringify(chunk);
      emitted.push(text);
      stream.emit(text);
    }
  }
  if (inlineUsage && stream.includeUsage) stream.emit(usageChunk(operation, publicModel, inlineUsage.frame, inlineUsage.usage));
  // a stream that never reported usage (a server that ignores stream_options) is billed by an estimate,
  // and a caller that asked for usage gets it in the usage chunk OpenAI would have sent
  if (streamedUsage === undefined) {
    const estimate = await estimateUsage(upstreamBody, emitted, call);
    usage = estimate;
    // what the estimate reports, audio details included, is what the worker bills audio by (audio-price.ts)
    if (estimate.audio) streamedUsage = openaiUsage(estimate);
    if (stream.includeUsage) stream.emit(usageChunk(operation, publicModel, streamFrame(emitted), openaiUsage(estimate)));
  }
  return readsTier && servedTier !== undefined ? { usage, streamedUsage, servedTier } : { usage, streamedUsage };
}
