import { expect } from 'chai';
import { CohereStreamTranslator } from '../../../api/dialects/cohere/stream';
import { cohereFinish } from '../../../api/dialects/cohere/response';
import type { CanonicalChunk } from '../../../api/dialects/canonical';

const chunk = (delta: NonNullable<CanonicalChunk['choices']>[0]['delta'], finish: NonNullable<CanonicalChunk['choices']>[0]['finish_reason'] = null): CanonicalChunk => ({ choices: [{ index: 0, delta, finish_reason: finish }] });

/** api/dialects/cohere/stream.ts: canonical chunks as Cohere's v2 chat stream events. */
describe('cohere stream translator', () => {
  it('closes the text before the tool calls, and starts a call at each new upstream index, whether or not it repeats the id', () => {
    const t = new CohereStreamTranslator('req_1');
    const evs = [
      ...t.push(chunk({ content: 'Let me check.' })),
      ...t.push(chunk({ tool_calls: [{ index: 0, id: 'call_a', function: { name: 'a', arguments: '{"x"' } }] })),
      ...t.push(chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] })),
      ...t.push(chunk({ tool_calls: [{ index: 1, function: { name: 'b', arguments: '{}' } }] }, 'tool_calls')),
      ...t.end(),
    ];
    expect(evs.map((e) => `${e.type}${'index' in e ? `:${String(e.index)}` : ''}`)).to.deep.equal([
      'message-start',
      'content-start:0',
      'content-delta:0',
      'content-end:0',
      'tool-call-start:0',
      'tool-call-delta:0',
      'tool-call-delta:0',
      'tool-call-end:0',
      'tool-call-start:1',
      'tool-call-delta:1',
      'tool-call-end:1',
      'message-end',
    ]);
    expect((evs[8].delta as { message: { tool_calls: { id: string; function: { name: string } } } }).message.tool_calls).to.deep.include({ id: 'call_1', function: { name: 'b', arguments: '' } });
    expect((evs.at(-1)!.delta as { finish_reason: string }).finish_reason).to.equal('TOOL_CALL');
  });

  it('with tools offered, holds the text until a call starts (then it is the plan: tool-plan-delta) or the answer ends (then it is the content); tool_choice NONE streams it as content', () => {
    const tools = [{ type: 'function' as const, function: { name: 'a' } }];
    const planned = new CohereStreamTranslator('req_3', { tools });
    const held = [...planned.push(chunk({ content: 'Let me ' })), ...planned.push(chunk({ content: 'check.' }))];
    expect(held.map((e) => e.type), 'nothing of the text yet').to.deep.equal(['message-start']);
    const rest = [...planned.push(chunk({ tool_calls: [{ index: 0, id: 'call_a', function: { name: 'a', arguments: '{}' } }] })), ...planned.push(chunk({ content: ' Then more.' }, 'tool_calls')), ...planned.end()];
    expect(rest.map((e) => e.type)).to.deep.equal(['tool-plan-delta', 'tool-plan-delta', 'tool-call-start', 'tool-call-delta', 'tool-plan-delta', 'tool-call-end', 'message-end']);
    expect(rest.filter((e) => e.type === 'tool-plan-delta').map((e) => (e.delta as { message: { tool_plan: string } }).message.tool_plan)).to.deep.equal(['Let me ', 'check.', ' Then more.']);

    const answered = new CohereStreamTranslator('req_4', { tools });
    const evs = [...answered.push(chunk({ content: 'No ' })), ...answered.push(chunk({ content: 'call.' }, 'stop')), ...answered.end()];
    expect(evs.map((e) => e.type)).to.deep.equal(['message-start', 'content-start', 'content-delta', 'content-delta', 'content-end', 'message-end']);
    const broke = new CohereStreamTranslator('req_5', { tools });
    broke.push(chunk({ content: 'half' }));
    expect(broke.failed('upstream broke').map((e) => e.type), 'held text is sent before the error').to.deep.equal(['content-start', 'content-delta', 'content-end', 'message-end']);

    const none = new CohereStreamTranslator('req_6', { tools, tool_choice: 'NONE' });
    expect(none.push(chunk({ content: 'at once' })).map((e) => e.type)).to.deep.equal(['message-start', 'content-start', 'content-delta']);
  });

  it('a failed stream ends with message-end ERROR and the message; finish reasons map as Cohere names them', () => {
    const t = new CohereStreamTranslator('req_2');
    t.push(chunk({ content: 'half' }));
    const end = t.failed('upstream broke');
    expect(end.map((e) => e.type)).to.deep.equal(['content-end', 'message-end']);
    expect(end[1].delta).to.deep.include({ finish_reason: 'ERROR', error: 'upstream broke' });
    expect([cohereFinish('stop', null), cohereFinish('stop', 'END'), cohereFinish('length', null), cohereFinish('tool_calls', null), cohereFinish('content_filter', null)]).to.deep.equal([
      'COMPLETE',
      'STOP_SEQUENCE',
      'MAX_TOKENS',
      'TOOL_CALL',
      'ERROR',
    ]);
  });
});
