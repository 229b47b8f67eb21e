import type { Request } from 'express';
import { ApiError } from '../../../shared/errors/ApiError';

/**
 * `max_tokens: 0` is Anthropic's prompt-cache pre-warming (SDK 1.16 MessageCreateParamsBase.max_tokens:
 * "Set to `0` to populate the prompt cache without generating a response"): the request is read and
 * its cache breakpoints written, nothing generated. An Anthropic-native upstream (the native bypass,
 * `native`) is sent it as it is, and its answer is passed on. Elsewhere it is refused before a lane is
 * used or anything billed: a translated upstream has no such mode (its `max_completion_tokens` starts
 * at 1), and the gateway's own search loop generates; and a message batch's line, as Anthropic's
 * batch guide says ("max_tokens: 0 (cache pre-warming) is not supported inside a batch", the cache
 * written would expire before the follow-up runs). Before, every upstream answered 400 "'max_tokens'
 * must be greater than or equal to 1".
 */
export function refuseZeroMaxTokens(req: Request, body: { max_tokens?: number }, native: boolean): void {
  if (body.max_tokens !== 0) return;
  if (req.batchLine) throw new ApiError(400, 'invalid_request', 'max_tokens: 0 (pre-warming the prompt cache) is not supported in a message batch; max_tokens must be at least 1.', { param: 'max_tokens' });
  if (!native) {
    throw new ApiError(400, 'unsupported_parameter', '`max_tokens` 0 (pre-warming the prompt cache, generating nothing) needs an Anthropic-native upstream; on this model `max_tokens` must be at least 1.', { param: 'max_tokens' });
  }
}
