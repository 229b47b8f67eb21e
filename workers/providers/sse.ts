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
  for await (const batch of readSseBatches(body, doneWhen)) yield* batch;
}

/**
 * `readSse` by upstream read: the events parsed from one read of the body come as one array (the
 * last one the terminating event, when it is among them), so a consumer awaits once a read instead
 * of once an event (a stream the upstream sends in one write is one await, not twenty; issue 29,
 * docs/benchmark.md). The same errors, and the same reading of the rest after the terminating event.
 */
export async function* readSseBatches(body: AsyncIterable<Uint8Array>, doneWhen: (e: EventSourceMessage) => boolean): AsyncGenerator<EventSourceMessage[]> {
  let queue: EventSourceMessage[] = [];
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
      if (!queue.length) continue;
      let batch = queue;
      queue = [];
      const last = batch.findIndex(doneWhen);
      if (last >= 0) {
        done = true;
        if (last < batch.length - 1) batch = batch.slice(0, last + 1);
      }
      yield batch;
      if (done) return;
    }
  } finally {
    // After the terminating event the rest of the body (normally just its end) is read in the
    // background, so the connection goes back to the pool; on an error or a cancel the body is
    // ended at once, which closes the connection.
    if (done) void readRest(body, it);
    else await it.return?.().catch(() => undefined);
  }
  if (!done) throw errors.upstreamError('The upstream stream ended before it finished.');
}

/** What an upstream may still send after its terminating event before the connection is cut. */
const REST_MAX_BYTES = 64 * 1024;
const REST_MAX_MS = 1000;

/**
 * Reads a body to its end after the terminating event. Ending an unfinished body instead (the
 * iterator's `return`) makes undici close the connection, so the next request pays a new one, and
 * makes node build an AbortError with its stack: on a streamed request, once each. A body that goes
 * on past REST_MAX_BYTES or REST_MAX_MS is destroyed (the connection is closed, as before).
 */
async function readRest(body: AsyncIterable<Uint8Array>, it: AsyncIterator<Uint8Array>): Promise<void> {
  const destroy = () => (body as { destroy?: () => void }).destroy?.();
  const timer = setTimeout(destroy, REST_MAX_MS);
  timer.unref(); // a worker stopping right after a stream does not wait for it
  let bytes = 0;
  try {
    for (;;) {
      const chunk = await it.next();
      if (chunk.done) return;
      bytes += chunk.value.length;
      if (bytes > REST_MAX_BYTES) return destroy();
    }
  } catch {
    /* destroyed, or the upstream dropped after its last event: nothing was lost */
  } finally {
    clearTimeout(timer);
  }
}
