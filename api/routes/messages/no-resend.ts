import type { Response } from 'express';
import { NOT_RETRYABLE } from '../../../shared/errors/codes';

/**
 * Marks a JSON answer whose generation was run (and billed) as one the client must not send again
 * when its body breaks off: `x-should-retry: false`. The official SDK (@anthropic-ai/sdk 1.17,
 * core/api-promise.js parseResponseRetrying and client.js "connection failed while reading the
 * response - retrying") sends the whole POST again when the connection fails while it reads a body
 * whose headers came, "or when the response said `x-should-retry: false`" it does not; without the
 * header a cut connection billed one generation twice (or three times, `maxRetries` 2). A stream is
 * never resent from there (its body is the caller's), count_tokens is free, and an answer served by
 * the answer cache runs nothing, so none of them carries it. Returns `answer`.
 */
export function billedAnswer<T>(res: Response, answer: T): T {
  res.set(NOT_RETRYABLE);
  return answer;
}
