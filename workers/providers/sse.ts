import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { errors } from '../../shared/errors/codes';

/**
 * Reads an upstream SSE body and yields each event. Throws `upstream_error` when the body ends
 * before `doneWhen` saw the terminating event (the upstream dropped mid-stream).
 */
/** An abort (client cancel, deadline) surfaces as the signal's reason, not as a dropped upstream. */
function signalAborted(err: unknown): boolean {
  return err instanceof Error && /abort/i.test(err.message);
}

export async function* readSse(body: AsyncIterable<Uint8Array>, doneWhen: (e: EventSourceMessage) => boolean): AsyncGenerator<EventSourceMessage> {
  const queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => queue.push(e) });
  const decoder = new TextDecoder();
  let done = false;
  const it = body[Symbol.asyncIterator]();
  try {
    for (;;) {
      let chunk: IteratorResult<Uint8Array>;
      try {
        chunk = await it.next();
      } catch (err) {
        if ((err as Error)?.name === 'AbortError' || signalAborted(err)) throw err;
        throw errors.upstreamError('The upstream connection dropped mid-stream.');
      }
      if (chunk.done) break;
      parser.feed(decoder.decode(chunk.value, { stream: true }));
      while (queue.length) {
        const e = queue.shift()!;
        if (doneWhen(e)) done = true;
        yield e;
        if (done) return;
      }
    }
  } finally {
    // Ends the body (and frees the connection) however the reader stops: done, error or cancel.
    await it.return?.().catch(() => undefined);
  }
  if (!done) throw errors.upstreamError('The upstream stream ended before it finished.');
}
