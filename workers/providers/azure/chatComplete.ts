import { azureEndpoint } from './api';
import { chatComplete as openaiChat, type ChatOutcome } from '../openai/chatComplete';
import type { Emit, UpstreamCall } from '../types';
import { dateOf, FIRST_WITH_MAX_COMPLETION_TOKENS } from './api-versions';

/** The body for a deployment at `version`: `max_completion_tokens` as `max_tokens` where the version predates it. */
export function forApiVersion(body: Record<string, unknown>, version: string | undefined): Record<string, unknown> {
  const dated = dateOf(version);
  if (!dated || dated >= FIRST_WITH_MAX_COMPLETION_TOKENS || !('max_completion_tokens' in body)) return body;
  const { max_completion_tokens, ...rest } = body;
  return rest.max_tokens === undefined ? { ...rest, max_tokens: max_completion_tokens } : rest;
}

/** Chat and legacy completions on an Azure OpenAI deployment: OpenAI's bodies and streams at Azure's URLs. */
export function chatComplete(
  call: UpstreamCall,
  operation: 'chat' | 'completions',
  body: Record<string, unknown>,
  publicModel: string,
  stream: { emit: Emit; includeUsage: boolean } | undefined,
): Promise<ChatOutcome> {
  return openaiChat(call, operation, forApiVersion(body, call.settings?.api_version), publicModel, stream, azureEndpoint);
}
