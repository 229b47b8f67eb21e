import { ApiError } from '../../../shared/errors/ApiError';

/**
 * A `thread: {type: 'continue', previous_message_id}` the gateway cannot continue: one it never handed
 * the caller's organization (native bypass, shared-account-ids.ts), or any on a translated upstream,
 * which holds no conversation (native-only.ts). Answered as Anthropic answers a thread it does not hold,
 * 404 `not_found_error` with `details.error_code: 'thread_not_found'` (@anthropic-ai/sdk 1.17: the
 * `'404 thread_not_found'` ThreadNotFoundError, core/error-classes; APIError reads
 * `body.error.details.error_code`), because the SDK's own thread helper (`client.beta.messages.thread()`,
 * lib/internal/threads/ThreadState `recoversFrom`: REPLAY_ERROR_CODES) answers that by sending the whole
 * history again under a new thread: a threaded conversation goes on, unthreaded where it must, instead
 * of failing. Nothing is sent or billed.
 */
export function threadNotFound(id: unknown, why: string): ApiError {
  const message = `thread.previous_message_id: message '${String(id).slice(0, 80)}' not found. ${why} Send the whole conversation in messages (a new thread: thread {type: 'create'}, or none).`;
  return new ApiError(404, 'thread_not_found', message, { param: 'thread.previous_message_id', details: { details: { error_code: 'thread_not_found' } } });
}
