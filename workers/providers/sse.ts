import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { errors } from '../../shared/errors/codes';

/**
 * Reads an upstream SSE body and yields each event. Throws `upstream_error` when the body ends
 * before `doneWhen` saw the terminating event (the upstream dropped mid-stream).
 */
export async function* readSse(body: ReadableStream<Uint8Array>, doneWhen: (e: EventSourceMessage) => boolean): AsyncGenerator<EventSourceMessage> {
  const queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => queue.push(e) });
  const decoder = new TextDecoder();
  let done = false;
  for await (const bytes of body as unknown as AsyncIterable<Uint8Array>) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    while (queue.length) {
      const e = queue.shift()!;
      if (doneWhen(e)) done = true;
      yield e;
      if (done) return;
    }
  }
  if (!done) throw errors.upstreamError('The upstream stream ended before it finished.');
}
