import type { Request } from 'express';
import { ApiError } from '../../../shared/errors/ApiError';
import { threadNotFound } from './thread-not-found';
import { continuesThread } from './tool-pairing';

/**
 * Fields only an Anthropic-native upstream can serve, refused elsewhere before a lane is used or
 * anything billed, rather than dropped (which would change the answer unsaid). `native`: the request
 * goes to Anthropic unchanged (the native bypass); the gateway's own web search loop is not native.
 *
 * - `max_tokens: 0`, Anthropic's prompt-cache pre-warming (SDK 1.16 MessageCreateParamsBase.max_tokens:
 *   "Set to `0` to populate the prompt cache without generating a response"): sent as it is to an
 *   Anthropic-native upstream, whose answer is passed on; a translated upstream has no such mode (its
 *   `max_completion_tokens` starts at 1) and the search loop generates. In a message batch's line it
 *   is refused everywhere, as Anthropic's batch guide says ("max_tokens: 0 (cache pre-warming) is not
 *   supported inside a batch"). Before, every upstream answered 400 "'max_tokens' must be greater than
 *   or equal to 1".
 * - `mcp_servers`, Anthropic's MCP connector (SDK 1.16 beta MessageCreateParams.mcp_servers): Anthropic
 *   connects to the servers and offers their tools to the model. A translated upstream was sent the
 *   request without them: the model answered without the tools it was given.
 * - `inference_geo` other than `global` (Anthropic's data residency: "`us`: Inference runs only in
 *   US-based infrastructure"; "`global`: Default. Inference may run in any available geography"):
 *   a translated upstream runs wherever its deployment is, which the gateway cannot promise (Anthropic's
 *   own document: on Bedrock and Vertex "inference_geo is not applicable"). Before, it was dropped unsaid.
 * - `container` (SDK 1.16 MessageCreateParamsContainer: a code execution container's id, or its
 *   `skills`): a translated upstream has no container (the code execution tools are refused there,
 *   `unsupported_tool`), so its skills were dropped unsaid.
 * - `thread` of type `continue` (SDK 1.17 beta BetaThreadContinueParams `{type: 'continue',
 *   previous_message_id}`: "resumes from a previous response so only the new turn's messages are
 *   sent"): the server holds the conversation before the new turn; a translated upstream holds none, so
 *   the model answered the new messages alone, its history lost unsaid. Answered 404 `thread_not_found`
 *   (thread-not-found.ts: the SDK's thread helper then sends the whole history again). `{type: 'create'}`
 *   (the server holding nothing changes this turn's answer) and null pass.
 */
export function refuseNativeOnly(req: Request, body: { max_tokens?: number; mcp_servers?: unknown; inference_geo?: unknown; container?: unknown; thread?: unknown }, native: boolean): void {
  if (body.max_tokens === 0 && req.batchLine) {
    throw new ApiError(400, 'invalid_request', 'max_tokens: 0 (pre-warming the prompt cache) is not supported in a message batch; max_tokens must be at least 1.', { param: 'max_tokens' });
  }
  if (native) return;
  if (body.max_tokens === 0) {
    throw new ApiError(400, 'unsupported_parameter', '`max_tokens` 0 (pre-warming the prompt cache, generating nothing) needs an Anthropic-native upstream; on this model `max_tokens` must be at least 1.', { param: 'max_tokens' });
  }
  // anything but an empty list asks for servers: a lone server object (no list) was dropped unsaid
  if (body.mcp_servers != null && !(Array.isArray(body.mcp_servers) && body.mcp_servers.length === 0)) {
    throw new ApiError(400, 'unsupported_parameter', '`mcp_servers` (the MCP connector) needs an Anthropic-native upstream; on this model declare the tools in `tools` and run them yourself.', { param: 'mcp_servers' });
  }
  if (body.inference_geo != null && body.inference_geo !== 'global') {
    throw new ApiError(400, 'unsupported_parameter', "`inference_geo` other than 'global' needs an Anthropic-native upstream; this model's inference cannot be kept to one geography (send 'global', or leave it out).", { param: 'inference_geo' });
  }
  if (body.container != null) {
    throw new ApiError(400, 'unsupported_parameter', '`container` (a code execution container, its skills) needs an Anthropic-native upstream; this model has no container.', { param: 'container' });
  }
  if (continuesThread(body)) throw threadNotFound((body.thread as { previous_message_id?: unknown }).previous_message_id, 'This model holds no thread (its upstream is not Anthropic-native).');
}
