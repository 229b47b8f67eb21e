import { expect } from 'chai';
import { expectAnthropic, expectCohere, expectOpenAI, expectResponsesEvent } from '../../helpers/conformance';

/** The conformance validators refuse what the vendored documents refuse, so the suite can fail. */
describe('conformance validators', () => {
  it("refuse an OpenAI error body without type and param (today's bug before issue 27)", () => {
    expect(() => expectOpenAI('ErrorResponse', { error: { code: 'invalid_request', message: 'm' } })).to.throw(/required property 'type'/);
    expectOpenAI('ErrorResponse', { error: { code: 'invalid_request', message: 'm', type: 'invalid_request_error', param: null } });
  });

  it('refuse a chat completion message without refusal, and follow $refs into nested schemas', () => {
    const completion = (message: object) => ({
      id: 'c',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content: 'hi', ...message } }],
    });
    expect(() => expectOpenAI('CreateChatCompletionResponse', completion({}))).to.throw(/refusal/);
    expectOpenAI('CreateChatCompletionResponse', completion({ refusal: null }));
    expect(() => expectOpenAI('CreateChatCompletionResponse', completion({ refusal: null, tool_calls: [{ id: 1 }] }))).to.throw(/tool_calls/);
  });

  it('check a Responses event by its type, and refuse a type the document does not define', () => {
    const done = { type: 'response.output_text.done', item_id: 'msg_1', output_index: 0, content_index: 0, text: 'hi', sequence_number: 3 };
    expect(() => expectResponsesEvent(done)).to.throw(/logprobs/);
    expectResponsesEvent({ ...done, logprobs: [] });
    expect(() => expectResponsesEvent({ type: 'response.made_up' })).to.throw(/no event of type/);
  });

  it('refuse a Cohere rerank result whose index is not an integer', () => {
    expectCohere('/v2/rerank', 200, { id: 'x', results: [{ index: 0, relevance_score: 0.5 }] });
    expect(() => expectCohere('/v2/rerank', 200, { results: [{ index: '0', relevance_score: 0.5 }] })).to.throw(/index/);
  });

  it('refuse an Anthropic Message without stop_reason and an error type Anthropic does not use', () => {
    const usage = { input_tokens: 1, output_tokens: 1, service_tier: 'standard', inference_geo: 'global' };
    const msg = { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'hi' }], container: null, stop_reason: 'end_turn', stop_sequence: null, stop_details: null, usage };
    expectAnthropic('Message', msg);
    const { stop_reason: _dropped, ...noStop } = msg;
    expect(() => expectAnthropic('Message', noStop)).to.throw(/stop_reason/);
    expect(() => expectAnthropic('ErrorObject', { type: 'server_error', message: 'm' })).to.throw(/type/);
  });

  it('refuse an Anthropic Message, usage or message_delta without the fields the API always sends (README: container, stop_details, service_tier, inference_geo)', () => {
    const usage = { input_tokens: 1, output_tokens: 1, service_tier: 'standard', inference_geo: 'global' };
    const msg = { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], container: null, stop_reason: null, stop_sequence: null, stop_details: null, usage };
    expectAnthropic('RawMessageStartEvent', { type: 'message_start', message: msg });
    const { container: _c, ...noContainer } = msg;
    expect(() => expectAnthropic('Message', noContainer)).to.throw(/container/);
    const { stop_details: _s, ...noDetails } = msg;
    expect(() => expectAnthropic('Message', noDetails)).to.throw(/stop_details/);
    const { inference_geo: _g, ...noGeo } = usage;
    expect(() => expectAnthropic('Message', { ...msg, usage: noGeo })).to.throw(/inference_geo/);
    const { service_tier: _t, ...noTier } = usage;
    expect(() => expectAnthropic('Message', { ...msg, usage: noTier })).to.throw(/service_tier/);
    const delta = { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null, stop_details: null }, usage: { output_tokens: 1 } };
    expectAnthropic('RawMessageDeltaEvent', delta);
    expect(() => expectAnthropic('RawMessageDeltaEvent', { ...delta, delta: { stop_reason: 'end_turn', stop_sequence: null } })).to.throw(/stop_details/);
  });
});
