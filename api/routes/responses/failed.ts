import type { Request } from 'express';
import type { SseWriter } from '../../sse';
import type { ResponsesEventWriter } from '../../dialects/responses/event-writer';
import type { CanonicalMessage } from '../../dialects/canonical';
import type { ResponsesItem } from '../../dialects/responses/request';
import { ApiError } from '../../../shared/errors/ApiError';
import { logger } from '../../../shared/logger';
import { storeResponse } from './store';

/**
 * The end of a Responses stream that failed after it started: `response.failed` with the failed
 * Response. Unless `store` is false, that Response (status `failed`, its `error`, the output cut by
 * the failure) is stored first, so GET, input_items and delete find it at once; its conversation is
 * its input alone (`conversation`: the history and this request's turn), so a follow-up naming it
 * continues from that input, without the half-made turn (docs/dialects.md). A store that fails
 * does not keep the stream from ending.
 */
export async function endFailedStream(
  req: Request,
  sse: SseWriter,
  w: ResponsesEventWriter,
  err: unknown,
  stored: { conversation: CanonicalMessage[]; request: { input?: string | ResponsesItem[] } } | undefined,
): Promise<void> {
  const e = err instanceof ApiError ? err : new ApiError(502, 'upstream_error', 'The stream failed.');
  sse.failed(e);
  const { events, response } = w.failed(e);
  if (stored) await storeResponse(req, response, stored.conversation, stored.request).catch((x) => logger.warn({ err: x, requestId: req.id }, 'failed response not stored'));
  for (const ev of events) sse.send(JSON.stringify(ev), ev.type);
  sse.end();
}
