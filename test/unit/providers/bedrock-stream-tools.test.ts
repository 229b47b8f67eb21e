import { expect } from 'chai';
import type { ConverseStreamOutput } from '@aws-sdk/client-bedrock-runtime';
import { ConverseToChatStream } from '../../../workers/providers/bedrock/stream-to-chat';

describe('bedrock upstream: a streamed tool call with no input', () => {
  it('gets arguments "{}" at its contentBlockStop (as the JSON path gives); one with input keeps it', () => {
    const t = new ConverseToChatStream('chatcmpl-1', 'pub');
    const events: ConverseStreamOutput[] = [
      { messageStart: { role: 'assistant' } },
      { contentBlockStart: { contentBlockIndex: 0, start: { toolUse: { toolUseId: 'tu1', name: 'now' } } } },
      { contentBlockDelta: { contentBlockIndex: 0, delta: { toolUse: { input: '' } } } },
      { contentBlockStop: { contentBlockIndex: 0 } },
      { contentBlockStart: { contentBlockIndex: 1, start: { toolUse: { toolUseId: 'tu2', name: 'then' } } } },
      { contentBlockDelta: { contentBlockIndex: 1, delta: { toolUse: { input: '{"a":1}' } } } },
      { contentBlockStop: { contentBlockIndex: 1 } },
      { messageStop: { stopReason: 'tool_use' } },
    ] as ConverseStreamOutput[];
    const calls = events.flatMap((e) => t.push(e)).flatMap((c) => ((c as any).choices[0].delta.tool_calls ?? []) as Array<{ index: number; function: { arguments: string } }>);
    const args = (i: number) => calls.filter((c) => c.index === i).map((c) => c.function.arguments).join('');
    expect(args(0)).to.equal('{}');
    expect(args(1)).to.equal('{"a":1}');
  });
});
