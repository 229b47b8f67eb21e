import { expect } from 'chai';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import type { Response } from 'openai/resources/responses/responses';
import type { Message } from '@anthropic-ai/sdk/resources/messages';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import { ResponseStream } from 'openai/lib/responses/ResponseStream';
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';

/**
 * A stream's events as the official SDKs' own stream helpers accumulate them, beyond the documents'
 * per-event schemas: openai 7 checks that every output item has its id (and a call its call_id), that
 * each item-scoped event's item_id and output_index name an item of the right type that is open, and
 * that content indexes only append; a chat stream's choice and tool call indexes must be integers in
 * range. Whatever they refuse fails here with the SDK's own message (docs/testing.md).
 *
 * Each helper takes the events' `data` in wire order (the JSON objects, `[DONE]` left out) and replays
 * them through the helper's `fromReadableStream` (newline-delimited JSON, as the SDKs document).
 */
function ndjson(events: unknown[]): ReadableStream {
  const text = events.map((e) => JSON.stringify(e)).join('\n') + '\n';
  return new ReadableStream({
    start(c) {
      c.enqueue(new TextEncoder().encode(text));
      c.close();
    },
  });
}

const objects = (events: unknown[]) => events.filter((e) => typeof e === 'object' && e !== null);

/** A Responses stream's events through openai's ResponseStream; its final Response. */
export async function sdkFinalResponse(events: unknown[]): Promise<Response> {
  const final = await ResponseStream.fromReadableStream(ndjson(objects(events))).finalResponse();
  expect(final.id, 'the SDK accumulated a Response').to.be.a('string');
  return final;
}

/** A chat completion stream's chunks through openai's ChatCompletionStream; its final ChatCompletion. */
export async function sdkFinalChatCompletion(chunks: unknown[]): Promise<ChatCompletion> {
  return ChatCompletionStream.fromReadableStream(ndjson(objects(chunks))).finalChatCompletion();
}

/** A messages stream's events through @anthropic-ai/sdk's MessageStream; its final Message. */
export async function sdkFinalMessage(events: unknown[]): Promise<Message> {
  return MessageStream.fromReadableStream(ndjson(objects(events))).finalMessage();
}
