import { azureEndpoint } from './api';
import { chatComplete as openaiChat, type ChatOutcome } from '../openai/chatComplete';
import type { Emit, UpstreamCall } from '../types';

/**
 * Azure's dated API versions before 2024-09-01 refuse `max_completion_tokens` ("Unrecognized request
 * argument supplied"); they know only `max_tokens`. Later dated versions, `v1` and `preview` take it
 * (and reasoning deployments take nothing else).
 */
const FIRST_WITH_MAX_COMPLETION_TOKENS = '2024-09-01';

/** The body for a deployment at `version`: `max_completion_tokens` as `max_tokens` where the version predates it. */
export function forApiVersion(body: Record<string, unknown>, version: string | undefined): Record<string, unknown> {
  const dated = version && /^\d{4}-\d{2}-\d{2}/.test(version) ? version.slice(0, 10) : undefined;
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
