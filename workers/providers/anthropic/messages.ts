import { anthropicApi } from './api';
import { fetchUpstream, type UpstreamResponse } from '../http';
import { readSse } from '../sse';
import type { Emit, TokenUsage, UpstreamCall } from '../types';
import { errors } from '../../../shared/errors/codes';
import { ApiError } from '../../../shared/errors/ApiError';
import { isRecord } from '../../../shared/is-record';
import { isRecords, optRecord, tokenCount } from '../shape';
import type { HandedId } from '../../../shared/tenancy/handed-out-ids';
import { eventIds, messageIds, threaded } from './handed-ids';

export interface MessagesOutcome {
  response?: Record<string, unknown>;
  usage: TokenUsage;
  /** A streamed answer's reported usage (message_start's, then message_delta's fields over it), for the request log's cached tokens. */
  streamedUsage?: AnthropicUsage;
}

interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/**
 * All input Anthropic billed (cached and cache-writing input is reported apart from input_tokens). A
 * count that is not one (a string of digits is read as its number; negative, fractional or not a
 * number: none) counts 0: summed as it came, `"10"` made `"1000"`, a negative count a credit.
 */
export function inputTokensOf(u: AnthropicUsage | undefined): number {
  return (tokenCount(u?.input_tokens) ?? 0) + (tokenCount(u?.cache_creation_input_tokens) ?? 0) + (tokenCount(u?.cache_read_input_tokens) ?? 0);
}

/** An in-stream `error` event of a messages upstream, as the gateway's error. */
export function streamFailure(data: { error?: { type?: string; message?: string } }): ApiError {
  const msg = `Upstream stream error: ${data.error?.message ?? 'unknown'}`.slice(0, 500);
  if (data.error?.type === 'overloaded_error') return errors.upstreamUnavailable(msg);
  if (data.error?.type === 'rate_limit_error') return errors.upstreamRateLimited(1);
  return errors.upstreamError(msg);
}

/** One POST /v1/messages; returns the raw response (the stream is read by the caller). */
export function postMessages(call: UpstreamCall, body: Record<string, unknown>, beta?: string): Promise<UpstreamResponse> {
  const headers = anthropicApi.headers(call.apiKey);
  if (beta) headers['anthropic-beta'] = beta;
  return fetchUpstream(
    anthropicApi.url(call.baseUrl, anthropicApi.paths.messages),
    { method: 'POST', headers, body: JSON.stringify(body) },
    { signal: call.signal, deadline: call.deadline, callerKey: call.callerKey, retries: call.retries, firstByteTimeoutMs: call.firstByteTimeoutMs, conversation: true },
  );
}

/**
 * A Message of the documented shape: `type` message, `content` an array of blocks (objects with a
 * string `type`), `usage` an object if any.
 */
export function wellFormedMessage(json: unknown): json is Record<string, unknown> & { content: Array<Record<string, unknown> & { type: string }> } {
  return isRecord(json) && json.type === 'message' && isRecords(json.content) && json.content.every((b) => typeof b.type === 'string') && optRecord(json.usage);
}

/**
 * A stream event of the documented shape: an object with a string `type`, and the object each type
 * is read for (message_start's `message`, content_block_start's `content_block`, a delta's `delta`).
 */
function wellFormedEvent(data: unknown): data is Record<string, unknown> & { type: string } {
  if (!isRecord(data) || typeof data.type !== 'string') return false;
  switch (data.type) {
    case 'message_start':
      return isRecord(data.message) && optRecord(data.message.usage);
    case 'content_block_start':
      return isRecord(data.content_block) && typeof data.content_block.type === 'string';
    case 'content_block_delta':
      return isRecord(data.delta) && typeof data.delta.type === 'string';
    case 'message_delta':
      return isRecord(data.delta) && optRecord(data.usage);
    case 'error':
      return optRecord(data.error);
    default:
      return true; // ping, content_block_stop, message_stop, and event types added later (passed on or skipped)
  }
}

/** Reads a messages stream and yields each event's parsed data (ends at message_stop). */
export async function* messagesEvents(res: UpstreamResponse): AsyncGenerator<Record<string, unknown> & { type: string }> {
  if (!res.body) throw errors.upstreamError('The upstream sent no stream.');
  for await (const ev of readSse(res.body, (e) => e.event === 'message_stop' || e.event === 'error')) {
    let data: unknown;
    try {
      data = JSON.parse(ev.data);
    } catch {
      throw errors.upstreamError('The upstream sent a malformed stream event.');
    }
    // valid JSON of another shape (`null`, a content_block_delta without its delta) is as malformed
    if (!wellFormedEvent(data)) throw errors.upstreamError('The upstream sent a malformed stream event.');
    if (data.type === 'error') throw streamFailure(data as never);
    yield data;
  }
}

/** Records the ids an answer hands the caller's organization (shared/tenancy/handed-out-ids.ts); never throws. */
export type HandedIdsRecorder = (ids: HandedId[]) => Promise<void>;

/**
 * Native bypass: the caller's messages request, unchanged but for the upstream model name, against
 * an Anthropic-native upstream, with the caller's `anthropic-beta` features. Answers and
 * `message_start` report the public model id. `record`: given the ids the answer hands the org
 * (a container, produced files, a thread's message: handed-ids.ts), awaited before the answer or the
 * event naming them goes out, so the org's next request can name them; only when there are some.
 */
export async function messages(call: UpstreamCall, body: Record<string, unknown>, publicModel: string, emit: Emit | undefined, beta?: string, record?: HandedIdsRecorder): Promise<MessagesOutcome> {
  const isThread = threaded(body);
  // model first, then set: a spread followed by a key gives each body a hidden class of its own (shared/merged.ts)
  const upstreamBody: Record<string, unknown> = { model: undefined, ...body };
  upstreamBody.model = call.upstreamModel;
  if (emit) upstreamBody.stream = true;
  else delete upstreamBody.stream;
  const res = await postMessages(call, upstreamBody, beta);
  if (!emit) {
    let json: unknown;
    try {
      json = await res.json();
    } catch {
      throw errors.upstreamError('The upstream answered with a malformed body.');
    }
    if (!wellFormedMessage(json)) throw errors.upstreamError('The upstream answered with a malformed body.');
    json.model = publicModel;
    const handed = record ? messageIds(json, isThread) : undefined;
    if (handed?.length) await record!(handed);
    const u = json.usage as AnthropicUsage | undefined;
    return { response: json, usage: { inputTokens: inputTokensOf(u), outputTokens: tokenCount(u?.output_tokens) ?? 0 } };
  }
  const usage: TokenUsage = { inputTokens: 0, outputTokens: 0 };
  let streamedUsage: AnthropicUsage | undefined;
  for await (const data of messagesEvents(res)) {
    if (data.type === 'message_start') {
      const m = data.message as Record<string, unknown>;
      m.model = publicModel;
      usage.inputTokens = inputTokensOf(m.usage as AnthropicUsage);
      usage.outputTokens = tokenCount((m.usage as AnthropicUsage | undefined)?.output_tokens) ?? 0;
      streamedUsage = { ...(m.usage as AnthropicUsage | undefined) };
    } else if (data.type === 'message_delta') {
      const u = data.usage as AnthropicUsage | undefined;
      if (u) {
        // cumulative counts; a field left out or null (MessageDeltaUsage's cache fields may be) keeps
        // message_start's, so cached input stays billed when the delta restates only input_tokens
        streamedUsage = Object.assign({}, streamedUsage);
        for (const [k, v] of Object.entries(u)) if (v != null) (streamedUsage as Record<string, unknown>)[k] = v;
        const out = tokenCount(u.output_tokens);
        if (out !== undefined) usage.outputTokens = out;
        usage.inputTokens = inputTokensOf(streamedUsage);
      }
    }
    const handed = record ? eventIds(data, isThread) : undefined;
    if (handed?.length) await record!(handed);
    emit(JSON.stringify(data));
  }
  return { usage, streamedUsage };
}
