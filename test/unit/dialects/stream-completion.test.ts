import { expect } from 'chai';
import { StreamedCompletion } from '../../../api/routes/chat/stream-completion';

const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 7, model: 'm', choices, ...extra });

/** A url_citation annotation as a search model's delta carries it (OpenAI's ChatCompletionMessage.Annotation). */
const cite = { type: 'url_citation', url_citation: { start_index: 0, end_index: 5, url: 'https://example.com/', title: 'Example' } };

/** What a streamed `store: true` request keeps: the completion its chunks add up to (annotations: [] when none came). */
describe('a stream of chat chunks added up to a completion', () => {
  it('merges content per choice, tool calls by their index (arguments concatenated), finish reasons and the usage chunk', () => {
    const s = new StreamedCompletion();
    s.push(chunk([{ index: 0, delta: { role: 'assistant', content: '' } }, { index: 1, delta: { role: 'assistant', content: 'B' } }], { system_fingerprint: 'fp_1' }));
    s.push(chunk([{ index: 0, delta: { content: 'Hel' } }]));
    s.push(chunk([{ index: 0, delta: { content: 'lo', annotations: [cite] } }, { index: 1, delta: { tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get', arguments: '{"q":' } }] } }]));
    s.push(chunk([{ index: 1, delta: { tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'put', arguments: '{}' } }, { index: 0, function: { arguments: '"x"}' } }] } }]));
    s.push('not json');
    s.push(JSON.stringify({ error: { message: 'ignored' } }));
    s.push(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }, { index: 1, delta: {}, finish_reason: 'tool_calls' }]));
    s.push(chunk([], { usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } }));
    expect(s.completion()).to.deep.equal({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 7,
      model: 'm',
      system_fingerprint: 'fp_1',
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
      choices: [
        { index: 0, message: { role: 'assistant', content: 'Hello', refusal: null, annotations: [cite] }, finish_reason: 'stop', logprobs: null },
        {
          index: 1,
          message: {
            role: 'assistant',
            content: 'B',
            refusal: null,
            annotations: [],
            tool_calls: [
              { id: 'call_a', type: 'function', function: { name: 'get', arguments: '{"q":"x"}' } },
              { id: 'call_b', type: 'function', function: { name: 'put', arguments: '{}' } },
            ],
          },
          finish_reason: 'tool_calls',
          logprobs: null,
        },
      ],
    });
  });

  it('keeps each choice\'s log probabilities in order, content and refusal, when the chunks carry them', () => {
    const s = new StreamedCompletion();
    const tok = (token: string) => ({ token, logprob: -0.5, bytes: [...Buffer.from(token)], top_logprobs: [] });
    s.push(chunk([{ index: 0, delta: { role: 'assistant', content: 'Hi' }, logprobs: { content: [tok('Hi')], refusal: null } }, { index: 1, delta: { refusal: 'No' }, logprobs: { content: null, refusal: [tok('No')] } }]));
    s.push(chunk([{ index: 0, delta: { content: ' there' }, logprobs: { content: [tok(' there')], refusal: null } }, { index: 1, delta: {}, finish_reason: 'stop', logprobs: null }]));
    s.push(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]));
    const choices = s.completion()!.choices as Array<{ logprobs: unknown }>;
    expect(choices[0].logprobs).to.deep.equal({ content: [tok('Hi'), tok(' there')], refusal: null });
    expect(choices[1].logprobs).to.deep.equal({ content: null, refusal: [tok('No')] });
  });

  it("takes a call's name as the last delta gave it (a server that repeats it on every delta), as openai's ChatCompletionStream does", () => {
    const s = new StreamedCompletion();
    const call = (args: string) => ({ index: 0, id: 'call_a', type: 'function', function: { name: 'get', arguments: args } });
    s.push(chunk([{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [call('{"q":')] } }]));
    s.push(chunk([{ index: 0, delta: { tool_calls: [call('"x"}')] }, finish_reason: 'tool_calls' }]));
    const message = (s.completion()!.choices as Array<{ message: Record<string, unknown> }>)[0].message;
    expect(message.tool_calls).to.deep.equal([{ id: 'call_a', type: 'function', function: { name: 'get', arguments: '{"q":"x"}' } }]);
  });

  it("keeps an Anthropic upstream's refusal stop_details from the finishing chunk's choice, as the JSON answer's choice has them", () => {
    const details = { type: 'refusal', category: null, explanation: null };
    const s = new StreamedCompletion();
    s.push(chunk([{ index: 0, delta: { role: 'assistant', content: 'I can' } }]));
    s.push(chunk([{ index: 0, delta: {}, finish_reason: 'content_filter', stop_details: details }]));
    const choice = (s.completion()!.choices as Array<Record<string, unknown>>)[0];
    expect(choice).to.deep.include({ finish_reason: 'content_filter', stop_details: details });
  });

  it('has nothing to keep when no chunk came, and a null usage when none was asked for', () => {
    expect(new StreamedCompletion().completion()).to.equal(undefined);
    const s = new StreamedCompletion();
    s.push(chunk([{ index: 0, delta: { refusal: 'No.' }, finish_reason: 'stop' }]));
    expect(s.completion()).to.deep.include({ usage: null });
    expect((s.completion()!.choices as Array<{ message: unknown }>)[0].message).to.deep.equal({ role: 'assistant', content: null, refusal: 'No.', annotations: [] });
  });
});
