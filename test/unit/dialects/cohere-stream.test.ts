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
