import { openaiApi } from './api';
import { fetchUpstream } from '../http';
import { readSse } from '../sse';
import type { Emit, TokenUsage, UpstreamCall } from '../types';
import { errors } from '../../../shared/errors/codes';

export interface ChatOutcome {
  /** The full response (non-streamed), `model` already set to the public id. */
  response?: Record<string, unknown>;
  usage: TokenUsage;
}

interface OpenAiUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
}

function usageOf(u: OpenAiUsage | undefined | null): TokenUsage | undefined {
  return u ? { inputTokens: u.prompt_tokens ?? 0, outputTokens: u.completion_tokens ?? 0 } : undefined;
}

/**
 * Chat completions or legacy completions against an OpenAI-compatible upstream. The body is sent
 * as the caller wrote it (unknown fields included) with the upstream model name swapped in; answers
 * get the public model id back. Streams always ask the upstream for usage (for metering) and drop
 * the usage-only chunk when the caller did not ask for it.
 */
export async function chatComplete(
  call: UpstreamCall,
  operation: 'chat' | 'completions',
  body: Record<string, unknown>,
  publicModel: string,
  stream: { emit: Emit; includeUsage: boolean } | undefined,
): Promise<ChatOutcome> {
  const upstreamBody: Record<string, unknown> = { ...body, model: call.upstreamModel };
  if (stream) {
    upstreamBody.stream = true;
    upstreamBody.stream_options = { ...((body.stream_options as object) ?? {}), include_usage: true };
  } else {
    delete upstreamBody.stream;
    delete upstreamBody.stream_options;
  }
  const res = await fetchUpstream(
    openaiApi.url(call.baseUrl, operation === 'chat' ? openaiApi.paths.chat : openaiApi.paths.completions),
    { method: 'POST', headers: openaiApi.headers(call.apiKey), body: JSON.stringify(upstreamBody) },
    { signal: call.signal, deadline: call.deadline, callerKey: call.callerKey, retries: call.retries, firstByteTimeoutMs: call.firstByteTimeoutMs },
  );

  if (!stream) {
    let json: Record<string, unknown>;
    try {
      json = (await res.json()) as Record<string, unknown>;
    } catch {
      throw errors.upstreamError('The upstream answered with a malformed body.');
    }
    if (!json || typeof json !== 'object' || !Array.isArray(json.choices)) {
      throw errors.upstreamError('The upstream answered with a malformed body.');
    }
    json.model = publicModel;
    return { response: json, usage: usageOf(json.usage as OpenAiUsage) ?? { inputTokens: 0, outputTokens: 0 } };
  }

  if (!res.body) throw errors.upstreamError('The upstream sent no stream.');
  let usage: TokenUsage = { inputTokens: 0, outputTokens: 0 };
  for await (const ev of readSse(res.body, (e) => e.data.trim() === '[DONE]')) {
    const data = ev.data.trim();
    if (data === '[DONE]') break;
    let chunk: Record<string, unknown>;
    try {
      chunk = JSON.parse(data) as Record<string, unknown>;
    } catch {
      throw errors.upstreamError('The upstream sent a malformed stream event.');
    }
    const u = usageOf(chunk.usage as OpenAiUsage);
    if (u) usage = u;
    const choices = chunk.choices as unknown[] | undefined;
    if (!stream.includeUsage) {
      if (u && (!choices || choices.length === 0)) continue; // usage-only chunk the caller did not ask for
      if ('usage' in chunk) delete chunk.usage;
    }
    chunk.model = publicModel;
    stream.emit(JSON.stringify(chunk));
  }
  return { usage };
}
