import { expect } from 'chai';
import { callId, parseCallId, withoutSignature } from '../../../workers/providers/gemini/call-ids';
import { withoutSignedCallIds } from '../../../workers/providers/unsigned-call-ids';

const SIG = Buffer.from('a thought signature of Gemini, opaque bytes').toString('base64');

describe('Gemini signed tool-call ids for other kinds (unsigned-call-ids.ts)', () => {
  it('withoutSignature keeps the head (minted or Gemini’s own id), and an id without a signature whole', () => {
    const minted = callId(SIG);
    expect(withoutSignature(minted)).to.match(/^call_[0-9a-f]{18}$/).and.equal(minted.split('_sig_')[0]);
    expect(withoutSignature(callId(SIG, 'abc123'))).to.equal('abc123');
    expect(withoutSignature('call_1')).to.equal('call_1');
    expect(withoutSignature('toolu_01A09q90qw90lq917835lq9')).to.equal('toolu_01A09q90qw90lq917835lq9');
    expect(withoutSignature('_sig_xyz'), 'nothing before the marker: not one of ours').to.equal('_sig_xyz');
    // the same id twice gives the same head: a call and its result pair
    expect(withoutSignature(minted)).to.equal(withoutSignature(minted));
    expect(parseCallId(minted).signature).to.equal(SIG);
  });

  it('a chat body with no signed id is the body itself (nothing copied)', () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'call_1', content: 'ok' }] };
    expect(withoutSignedCallIds('chat', body)).to.equal(body);
    const completions = { prompt: `x ${callId(SIG)}` };
    expect(withoutSignedCallIds('completions', completions), 'legacy completions carry no tool calls').to.equal(completions);
  });

  it('a chat body: tool calls, tool results and tool_media unsigned; other messages and the caller’s body untouched', () => {
    const a = callId(SIG);
    const b = callId(SIG, 'gem1');
    const user = { role: 'user', content: 'hi' };
    const call = { role: 'assistant', content: null, tool_calls: [{ id: a, type: 'function', function: { name: 'f', arguments: '{}' } }, { id: 'call_plain', type: 'function', function: { name: 'g', arguments: '{}' } }, { id: b, type: 'function', function: { name: 'h', arguments: '{}' } }] };
    const body = { model: 'm', temperature: 0, messages: [user, call, { role: 'tool', tool_call_id: a, content: 'ok' }, { role: 'tool', tool_call_id: 'call_plain', content: 'ok' }, { role: 'tool', tool_call_id: b, content: 'ok' }, { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:' } }], tool_media: [b] }] };
    const before = JSON.stringify(body);
    const out = withoutSignedCallIds('chat', body) as typeof body;
    expect(JSON.stringify(body), 'the job’s body is not changed').to.equal(before);
    expect(out).to.not.equal(body);
    expect(out.model).to.equal('m');
    expect(out.temperature).to.equal(0);
    expect(out.messages[0]).to.equal(user);
    expect((out.messages[1] as typeof call).tool_calls.map((c) => c.id)).to.deep.equal([a.split('_sig_')[0], 'call_plain', 'gem1']);
    expect((out.messages[1] as typeof call).tool_calls[1]).to.equal(call.tool_calls[1]);
    expect(out.messages.slice(2, 5).map((m) => (m as { tool_call_id: string }).tool_call_id)).to.deep.equal([a.split('_sig_')[0], 'call_plain', 'gem1']);
    expect(out.messages[3]).to.equal(body.messages[3]);
    expect((out.messages[5] as { tool_media: string[] }).tool_media).to.deep.equal(['gem1']);
    expect(JSON.stringify(out)).to.not.include('_sig_');
  });

  it('a messages body (the Anthropic bypass): tool_use ids and tool_result tool_use_ids unsigned; a body without them is itself', () => {
    const a = callId(SIG);
    const plain = { model: 'c', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'x' }] }] };
    expect(withoutSignedCallIds('messages', plain)).to.equal(plain);
    const text = { type: 'text', text: `mentions ${a}` };
    const body = { model: 'c', max_tokens: 5, messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: [text, { type: 'tool_use', id: a, name: 'f', input: {} }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: a, content: 'x' }] }] };
    const out = withoutSignedCallIds('messages', body) as typeof body;
    const head = a.split('_sig_')[0];
    expect(out.messages[0]).to.equal(body.messages[0]);
    expect(out.messages[1].content).to.deep.equal([text, { type: 'tool_use', id: head, name: 'f', input: {} }]);
    expect((out.messages[1].content as unknown[])[0], 'text is not an id').to.equal(text);
    expect(out.messages[2].content).to.deep.equal([{ type: 'tool_result', tool_use_id: head, content: 'x' }]);
    expect((body.messages[1].content as Array<{ id?: string }>)[1].id).to.equal(a);
  });

  it('a caller’s own __proto__ key stays a key of the copy', () => {
    const a = callId(SIG);
    const m = JSON.parse(`{"role":"tool","tool_call_id":"${a}","content":"x","__proto__":{"polluted":true}}`);
    const out = withoutSignedCallIds('chat', { messages: [m] }) as { messages: Array<Record<string, unknown>> };
    expect(Object.getPrototypeOf(out.messages[0])).to.equal(Object.prototype);
    expect(Object.hasOwn(out.messages[0], '__proto__')).to.equal(true);
    expect(out.messages[0].tool_call_id).to.equal(a.split('_sig_')[0]);
  });
});
