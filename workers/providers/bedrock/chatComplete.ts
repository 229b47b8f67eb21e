import { ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import { clientFor } from './api';
import { bedrockFailure } from './errors';
import { canonicalToConverse } from './to-converse';
import { completionId, converseToCompletion } from './from-converse';
import { ConverseToChatStream } from './stream-to-chat';
import type { Emit, UpstreamCall } from '../types';
import type { ChatOutcome } from '../openai/chatComplete';

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
  const input = canonicalToConverse(body, call.upstreamModel);
  const client = clientFor(call);
  const opts = { abortSignal: call.signal };
  let midStream = false;
  try {
    if (!stream) {
      const res = await client.send(new ConverseCommand(input), opts);
      const completion = converseToCompletion(res, publicModel);
      const u = completion.usage as { prompt_tokens: number; completion_tokens: number };
      return { response: completion, usage: { inputTokens: u.prompt_tokens, outputTokens: u.completion_tokens } };
    }
    const res = await client.send(new ConverseStreamCommand(input), opts);
    const t = new ConverseToChatStream(completionId(res.$metadata.requestId), publicModel);
    midStream = true;
    for await (const ev of res.stream ?? []) for (const c of t.push(ev)) stream.emit(JSON.stringify(c));
    if (stream.includeUsage) stream.emit(JSON.stringify(t.usageChunk()));
    const u = t.usageTotals();
    return { usage: { inputTokens: u.prompt_tokens, outputTokens: u.completion_tokens } };
  } catch (err) {
    throw bedrockFailure(err, call.signal, call.callerKey, midStream);
  }
}
