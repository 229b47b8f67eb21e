import { EventStreamCodec } from '@smithy/core/event-streams';

/**
 * AWS event-stream framing (the binary `application/vnd.amazon.eventstream` of Bedrock's
 * converse-stream), written with the codec AWS's SDK reads it with.
 */
const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString('utf8'),
  (text) => new Uint8Array(Buffer.from(text, 'utf8')),
);

const str = (value: string) => ({ type: 'string' as const, value });

/** One event message: `:event-type` names the union member, the JSON body is its value. */
export function eventFrame(eventType: string, body: unknown): Uint8Array {
  return codec.encode({
    headers: { ':event-type': str(eventType), ':content-type': str('application/json'), ':message-type': str('event') },
    body: Buffer.from(JSON.stringify(body)),
  });
}

/** One in-stream exception message (e.g. `throttlingException`), as Bedrock sends mid-stream. */
export function exceptionFrame(exceptionType: string, message: string): Uint8Array {
  return codec.encode({
    headers: { ':exception-type': str(exceptionType), ':content-type': str('application/json'), ':message-type': str('exception') },
    body: Buffer.from(JSON.stringify({ message })),
  });
}
