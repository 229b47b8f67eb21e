import { ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import { clientFor } from './api';
import { bedrockFailure } from './errors';
import { canonicalToConverse } from './to-converse';
import { completionId, converseToCompletion } from './from-converse';
import { ConverseToChatStream } from './stream-to-chat';
import type { Emit, UpstreamCall } from '../types';
import type { ChatOutcome } from '../openai/chatComplete';
import { noAnswerWithin } from '../http';
import { errors } from '../../../shared/errors/codes';
import { emitChunks, emitUsageChunk } from '../emit-chunks';
import { backendFingerprint } from '../fingerprint';
import type { CancelSignal } from '../../../shared/cancel-source';

/**
 * The model pool's first-byte limit for one SDK call (the SDK's own timeouts are off, api.ts): a
 * signal that follows the call's and also aborts when `send` has not resolved within `ms`. `send`
 * resolves at the response headers for converse-stream, and once the answer is read for converse
 * (whose headers come when it is complete, as for every non-streamed upstream).
 */
function firstByteLimit(signal: CancelSignal, ms: number | undefined) {
  const c = new AbortController();
  const follow = () => c.abort(signal.reason);
  if (signal.aborted) follow();
  else signal.addEventListener('abort', follow, { once: true });
  let expired = false;
  const timer = ms ? setTimeout(() => ((expired = true), c.abort()), ms) : undefined;
  return {
    signal: c.signal,
    answered: () => clearTimeout(timer),
    expired: () => expired,
    done: () => (clearTimeout(timer), signal.removeEventListener('abort', follow)),
  };
}

/**
 * A canonical chat job against Bedrock Converse (`/model/{upstream}/converse`, or
 * `/converse-stream` with AWS event-stream framing), through AWS's SDK client; answered in the
 * canonical shape (JSON or chunks), so every dialect reaches every Bedrock model.
 */
export async function chatComplete(
  call: UpstreamCall,
  body: Record<string, unknown>,
  publicModel: string,
  stream: { emit: Emit; includeUsage: boolean } | undefined,
): Promise<ChatOutcome> {
  const input = canonicalToConverse(body, call.upstreamModel, call.baseModel);
  const stops = input.inferenceConfig?.stopSequences ?? [];
  const client = clientFor(call);
  const limit = firstByteLimit(call.signal, call.firstByteTimeoutMs);
  const opts = { abortSignal: limit.signal };
  let midStream = false;
  const fingerprint = backendFingerprint('bedrock', call);
  try {
    if (!stream) {
      const res = await client.send(new ConverseCommand(input), opts);
      limit.answered();
      const completion = converseToCompletion(res, publicModel, stops);
      completion.system_fingerprint = fingerprint;
      const u = completion.usage as { prompt_tokens: number; completion_tokens: number };
      return { response: completion, usage: { inputTokens: u.prompt_tokens, outputTokens: u.completion_tokens } };
    }
    const res = await client.send(new ConverseStreamCommand(input), opts);
    limit.answered();
    const t = new ConverseToChatStream(completionId(res.$metadata.requestId), publicModel, stops);
    midStream = true;
    for await (const ev of res.stream ?? []) emitChunks(stream, t.push(ev), fingerprint);
    // A stream that ends cleanly before messageStop is cut short, as the other adapters read it (sse.ts).
    if (!t.stopped) throw errors.upstreamError('The upstream stream ended before it finished.');
    emitUsageChunk(stream, t.usageChunk(), fingerprint);
    const u = t.usageTotals();
    return { usage: { inputTokens: u.prompt_tokens, outputTokens: u.completion_tokens } };
  } catch (err) {
    if (limit.expired() && !call.signal.aborted) throw noAnswerWithin(call.firstByteTimeoutMs);
    throw bedrockFailure(err, call.signal, call.callerKey, midStream);
  } finally {
    limit.done();
  }
}
