import { azureEndpoint } from './api';
import { chatComplete as openaiChat, type ChatOutcome } from '../openai/chatComplete';
import type { Emit, UpstreamCall } from '../types';

/** Chat and legacy completions on an Azure OpenAI deployment: OpenAI's bodies and streams at Azure's URLs. */
export function chatComplete(
  call: UpstreamCall,
  operation: 'chat' | 'completions',
  body: Record<string, unknown>,
  publicModel: string,
  stream: { emit: Emit; includeUsage: boolean } | undefined,
): Promise<ChatOutcome> {
  return openaiChat(call, operation, body, publicModel, stream, azureEndpoint);
}
