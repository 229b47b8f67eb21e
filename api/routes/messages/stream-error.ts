import { SseWriter } from '../../sse';
import { ApiError } from '../../../shared/errors/ApiError';
import { anthropicErrorType } from '../../dialects/messages/errors';

/** Headers are out: Anthropic's in-band `error` event, whose data is wrapped so its `type` names the event. */
export function streamError(sse: SseWriter, err: unknown): void {
  const e = err instanceof ApiError ? err : new ApiError(502, 'upstream_error', 'The stream failed.');
  sse.failed(e);
  sse.send(JSON.stringify({ type: 'error', error: { type: anthropicErrorType(e.status), code: e.code, message: e.message } }), 'error');
  sse.end();
}
