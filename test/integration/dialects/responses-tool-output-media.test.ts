import { expect } from 'chai';
import OpenAI from 'openai';
import { completion } from '../../helpers/scripted-upstream';
import { clientToolSuite } from '../../helpers/client-tools';
import { scriptedClaude } from '../../helpers/sdk-clients';

/**
 * A function tool's output as OpenAI's ResponseFunctionCallOutputItemList (`input_text`,
 * `input_image`, `input_file` parts; what Codex's `view_image` sends back): its text is the tool
 * result, its images and files reach the model in a user message right after the turn's tool results
 * (chat tool messages carry text only). Before, they were dropped and the model got an empty result.
 */
type Sent = { messages: Array<Record<string, unknown>> };

const PNG_A = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const PNG_B = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const PDF = 'JVBERi0xLjQKJcOkw7zDtsOfCg==';
const call = (call_id: string) => ({ type: 'function_call' as const, call_id, name: 'view_image', arguments: JSON.stringify({ path: `/w/${call_id}.png` }) });
const tools: OpenAI.Responses.FunctionTool[] = [{ type: 'function', name: 'view_image', parameters: { type: 'object', properties: { path: { type: 'string' } } }, strict: false }];

/** Two parallel view_image calls, their outputs (text and an image; an image alone), then a user turn. */
const input = (second: OpenAI.Responses.ResponseFunctionCallOutputItemList): OpenAI.Responses.ResponseInputItem[] => [
  { role: 'user', content: 'Look at both pictures.' },
  call('call_a'),
  call('call_b'),
  { type: 'function_call_output', call_id: 'call_a', output: [{ type: 'input_text', text: 'Image a:' }, { type: 'input_image', image_url: `data:image/png;base64,${PNG_A}`, detail: 'high' }] },
  { type: 'function_call_output', call_id: 'call_b', output: second },
  { role: 'user', content: 'Which is redder?' },
];

describe('Responses: images and files in a function tool output', function () {
  this.timeout(30_000);

  describe('on an OpenAI-compatible upstream', () => {
    const s = clientToolSuite();

    it('sends the text as the tool message and the images, in call order, as a user message after the tool results', async () => {
      s.up.next.push({ kind: 'json', body: completion({ content: 'The first.' }, 'stop') });
      const res = await s.client.responses.create({ model: s.model, tools, input: input([{ type: 'input_image', image_url: `data:image/png;base64,${PNG_B}`, detail: 'auto' }]) });
      expect(res.output_text).to.equal('The first.');
      expect((s.up.received[0].body as Sent).messages.slice(1)).to.deep.equal([
        { role: 'assistant', content: null, tool_calls: ['call_a', 'call_b'].map((id) => ({ id, type: 'function', function: { name: 'view_image', arguments: JSON.stringify({ path: `/w/${id}.png` }) } })) },
        { role: 'tool', tool_call_id: 'call_a', content: 'Image a:' },
        { role: 'tool', tool_call_id: 'call_b', content: '' },
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_A}`, detail: 'high' } },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_B}`, detail: 'auto' } },
          ],
        },
        { role: 'user', content: 'Which is redder?' },
      ]);
    });

    it('refuses an output image given by file id (400 invalid_request), as an input image, before anything is sent', async () => {
      const err = await s.client.responses.create({ model: s.model, tools, input: input([{ type: 'input_image', file_id: 'file-abc', detail: 'auto' }]) }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).to.include('file ids are not supported');
      expect(s.up.received).to.have.length(0);
    });
  });

  describe('on an Anthropic-native upstream', () => {
    const s = scriptedClaude({ id: 'msg_1', type: 'message', role: 'assistant', model: 'up-model', content: [{ type: 'text', text: 'The first.' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 9, output_tokens: 3 } });
    let model: string;
    before(async () => {
      model = await s.up.model();
    });

    // Anthropic's tool_result content is "a list of nested content blocks ... text, image, or document" (ToolResultBlockParam.content)
    it('sends each output’s images and file (as a document) inside its own tool_result, then the user text, in one user turn', async () => {
      const res = await s.openai.responses.create({ model, tools, input: input([{ type: 'input_file', filename: 'b.pdf', file_data: `data:application/pdf;base64,${PDF}` }]) });
      expect(res.output_text).to.equal('The first.');
      const sent = s.up.received[0].body as Sent;
      expect(sent.messages.at(-1)).to.deep.equal({
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_a', content: [{ type: 'text', text: 'Image a:' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_A } }] },
          { type: 'tool_result', tool_use_id: 'call_b', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'b.pdf' }] },
          { type: 'text', text: 'Which is redder?' },
        ],
      });
    });

    it('an image-only tool output reaches Claude as the tool_result’s image, not as an empty result', async () => {
      await s.openai.responses.create({ model, tools, input: input([{ type: 'input_image', image_url: `data:image/png;base64,${PNG_B}`, detail: 'auto' }]) });
      const turn = (s.up.received.at(-1)!.body as Sent).messages.at(-1) as { content: Array<Record<string, unknown>> };
      expect(turn.content.find((b) => b.tool_use_id === 'call_b')).to.deep.equal({ type: 'tool_result', tool_use_id: 'call_b', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_B } }] });
      expect(turn.content.filter((b) => b.type === 'image'), 'no image left outside the tool results').to.have.length(0);
    });
  });
});
