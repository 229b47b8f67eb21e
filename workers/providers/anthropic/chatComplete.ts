import { canonicalToMessages } from './to-messages';
import { messageToCompletion } from './from-messages';
import { MessagesToChatStream } from './stream-to-chat';
import { messagesEvents, postMessages, wellFormedMessage } from './messages';
import type { Emit, UpstreamCall } from '../types';
import type { ChatOutcome } from '../openai/chatComplete';
import { errors } from '../../../shared/errors/codes';
import { emitChunks, emitUsageChunk } from '../emit-chunks';
import { backendFingerprint } from '../fingerprint';

/**
 * A canonical chat job against an Anthropic-native upstream: translated to messages, answered in
 * the canonical shape (JSON or chunks), so every dialect works on every model.
 */
export async function chatComplete(
  call: UpstreamCall,
  body: Record<string, unknown>,
  publicModel: string,
  stream: { emit: Emit; includeUsage: boolean } | undefined,
): Promise<ChatOutcome> {
  const upstreamBody = canonicalToMessages(body, call.upstreamModel);
  if (stream) upstreamBody.stream = true;
  const res = await postMessages(call, upstreamBody);
  const fingerprint = backendFingerprint('anthropic', call);
  if (!stream) {
    let json: unknown;
    try {
      json = await res.json();
    } catch {
      throw errors.upstreamError('The upstream answered with a malformed body.');
    }
    if (!wellFormedMessage(json)) throw errors.upstreamError('The upstream answered with a malformed body.');
    const completion = messageToCompletion(json, publicModel);
    completion.system_fingerprint = fingerprint;
    const u = completion.usage as { prompt_tokens: number; completion_tokens: number };
    return { response: completion, usage: { inputTokens: u.prompt_tokens, outputTokens: u.completion_tokens } };
  }
  const t = new MessagesToChatStream(publicModel);
  for await (const ev of messagesEvents(res)) emitChunks(stream, t.push(ev), fingerprint);
  emitUsageChunk(stream, t.usageChunk(), fingerprint);
  const u = t.usageTotals();
  return { usage: { inputTokens: u.prompt_tokens, outputTokens: u.completion_tokens } };
}
