import { SseWriter, failStream } from '../../sse';
import { anthropicErrorType } from '../../dialects/messages/errors';

/**
 * The end of a messages stream whose request failed (failStream: nothing for a client that left, the
 * error handler's answer before the headers): once they are out, Anthropic's in-band `error` event,
 * whose data is wrapped so its `type` names the event.
 */
export function streamError(sse: SseWriter, err: unknown): void {
  failStream(sse, err, (e) => sse.send(JSON.stringify({ type: 'error', error: { type: anthropicErrorType(e.status), code: e.code, message: e.message } }), 'error'));
}
