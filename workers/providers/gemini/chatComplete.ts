import { canonicalToGemini } from './to-gemini';
import { geminiToCompletion, wellFormedResponse, type GeminiResponse } from './from-gemini';
import { GeminiToChatStream } from './stream-to-chat';
import { geminiEvents, postGemini } from './generate';
import type { Emit, UpstreamCall } from '../types';
import type { ChatOutcome } from '../openai/chatComplete';
import { errors } from '../../../shared/errors/codes';
import { logprobsAsk } from './logprobs';
import { emitChunks, emitUsageChunk } from '../emit-chunks';
import { backendFingerprint } from '../fingerprint';

/**
 * A canonical chat job against the Gemini API: translated to generateContent, answered in the
 * canonical shape (JSON or chunks), so that every dialect reaches Gemini models; `n` candidates
 * become as many choices, with their log probabilities when asked for.
 */
export async function chatComplete(call: UpstreamCall, body: Record<string, unknown>, publicModel: string, stream: { emit: Emit; includeUsage: boolean } | undefined): Promise<ChatOutcome> {
  const upstreamBody = canonicalToGemini(body);
  const ask = logprobsAsk(body);
  const res = await postGemini(call, stream ? 'streamGenerateContent' : 'generateContent', upstreamBody);
  const fingerprint = backendFingerprint('gemini', call);
  if (!stream) {
    let json: GeminiResponse;
    try {
      json = (await res.json()) as GeminiResponse;
    } catch {
      throw errors.upstreamError('The upstream answered with a malformed body.');
    }
    if (!wellFormedResponse(json) || (!Array.isArray(json.candidates) && !json.promptFeedback)) throw errors.upstreamError('The upstream answered with a malformed body.');
    const completion = geminiToCompletion(json, publicModel, ask);
    completion.system_fingerprint = fingerprint;
    const u = completion.usage as { prompt_tokens: number; completion_tokens: number };
    return { response: completion, usage: { inputTokens: u.prompt_tokens, outputTokens: u.completion_tokens } };
  }
  const t = new GeminiToChatStream(publicModel, ask);
  for await (const r of geminiEvents(res, typeof body.n === 'number' && body.n > 1 ? body.n : 1)) emitChunks(stream, t.push(r), fingerprint);
  emitUsageChunk(stream, t.usageChunk(), fingerprint);
  const u = t.usageTotals();
  return { usage: { inputTokens: u.prompt_tokens, outputTokens: u.completion_tokens } };
}
