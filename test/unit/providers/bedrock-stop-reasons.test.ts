import { expect } from 'chai';
import { converseToCompletion } from '../../../workers/providers/bedrock/from-converse';
import { ConverseToChatStream } from '../../../workers/providers/bedrock/stream-to-chat';
import { canonicalToMessage } from '../../../api/dialects/messages/response';
import { MessagesStreamTranslator } from '../../../api/dialects/messages/stream';
import type { CanonicalChunk, CanonicalCompletion } from '../../../api/dialects/canonical';

/**
 * Converse's stop reasons that chat's finish_reason cannot tell apart, through the Bedrock adapter and
 * the messages dialect, JSON and streamed: `model_context_window_exceeded` (chat `length`, as
 * `max_tokens`) and `stop_sequence` (chat `stop`, as `end_turn`), as Anthropic's Message states them.
 */
describe('bedrock: Converse stop reasons reach the messages dialect', () => {
  const content = [{ text: 'partial' }];
  const cases: Array<[string, unknown, string[], { stop_reason: string; stop_sequence: string | null }]> = [
    ['model_context_window_exceeded', undefined, [], { stop_reason: 'model_context_window_exceeded', stop_sequence: null }],
    ['max_tokens', undefined, [], { stop_reason: 'max_tokens', stop_sequence: null }],
    ['stop_sequence', { stop_sequence: 'B' }, ['A', 'B'], { stop_reason: 'stop_sequence', stop_sequence: 'B' }],
    ['stop_sequence', undefined, ['A'], { stop_reason: 'stop_sequence', stop_sequence: 'A' }],
    ['stop_sequence', undefined, ['A', 'B'], { stop_reason: 'end_turn', stop_sequence: null }],
    // a reported sequence the request did not ask for is not taken
    ['stop_sequence', { stop_sequence: 'Z' }, ['A', 'B'], { stop_reason: 'end_turn', stop_sequence: null }],
    ['end_turn', undefined, ['A'], { stop_reason: 'end_turn', stop_sequence: null }],
  ];
  for (const [stopReason, fields, stops, expected] of cases) {
    it(`${stopReason} ${JSON.stringify(fields ?? {})} asked ${JSON.stringify(stops)}: ${expected.stop_reason}`, () => {
      const json = converseToCompletion({ output: { message: { role: 'assistant', content } }, stopReason, additionalModelResponseFields: fields, usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } } as never, 'pub', stops);
      const m = canonicalToMessage(json as unknown as CanonicalCompletion, 'pub', undefined, stops);
      expect({ stop_reason: m.stop_reason, stop_sequence: m.stop_sequence }).to.deep.equal(expected);

      const t = new ConverseToChatStream('chatcmpl-1', 'pub', stops);
      const chunks = [
        ...t.push({ messageStart: { role: 'assistant' } } as never),
        ...t.push({ contentBlockDelta: { contentBlockIndex: 0, delta: { text: 'partial' } } } as never),
        ...t.push({ messageStop: { stopReason, additionalModelResponseFields: fields } } as never),
      ];
      const x = new MessagesStreamTranslator('pub', undefined, stops);
      for (const c of chunks) x.push(JSON.parse(JSON.stringify(c)) as CanonicalChunk);
      const delta = x.end().find((e) => e.type === 'message_delta')!.delta;
      // message_delta's delta also carries SDK 1.17's required-nullable stop_details and container, null here
      expect(delta).to.deep.equal({ ...expected, stop_details: null, container: null });
    });
  }
});
