import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { scriptedClaude } from '../../helpers/sdk-clients';

/**
 * A model whose capabilities say `json_schema: false` (it cannot hold to a schema): a strict function
 * tool or a JSON-schema response format is refused 400 `unsupported_parameter` naming the field,
 * before anything is sent (the Anthropic adapter sent them as strict tools and
 * `output_config.format` whatever the capability), through the official SDKs. The same request is
 * sent to a model that declares the capability.
 */
const message = { id: 'msg_s', type: 'message', role: 'assistant', model: 'up', content: [{ type: 'text', text: '{"q":"a"}' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 3 } };
const user = [{ role: 'user' as const, content: 'hi' }];
const schema = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false };
const strictTool = { type: 'function' as const, function: { name: 'find', parameters: schema, strict: true } };
const looseTool = { type: 'function' as const, function: { name: 'other', parameters: schema } };

describe('structured outputs on a model without the json_schema capability', function () {
  this.timeout(30_000);
  const s = scriptedClaude(message);
  let capable: string;
  let incapable: string;
  before(async () => {
    capable = await s.up.model();
    incapable = await s.up.model({ capabilities: { chat: true, tools: true, json_schema: false } });
  });

  async function refusedChat(extra: Record<string, unknown>, param: string): Promise<void> {
    s.up.received = [];
    const err = await s.openai.chat.completions.create({ model: incapable, messages: user, ...extra } as OpenAI.ChatCompletionCreateParamsNonStreaming).catch((e: unknown) => e);
    expect(err, String(err)).to.be.instanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).to.equal('unsupported_parameter');
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal(param);
    expect(s.up.received, 'nothing sent').to.have.length(0);
  }

  it('chat completions: a strict function tool is refused naming it, a JSON-schema response format naming response_format; a model that declares it gets both', async () => {
    await refusedChat({ tools: [looseTool, strictTool] }, 'tools[1].function.strict');
    await refusedChat({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema, strict: true } } }, 'response_format');
    // the same requests are sent to a model that declares it; tools without strict and JSON mode still reach the one that does not
    s.up.received = [];
    await s.openai.chat.completions.create({ model: capable, messages: user, tools: [strictTool], response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } });
    expect(s.up.received[0].body.tools[0]).to.include({ name: 'find', strict: true });
    expect(s.up.received[0].body.output_config).to.deep.equal({ format: { type: 'json_schema', schema } });
    await s.openai.chat.completions.create({ model: incapable, messages: user, tools: [looseTool], response_format: { type: 'json_object' } });
    expect(s.up.received).to.have.length(2);
    expect(s.up.received[1].body.tools[0]).not.to.have.property('strict');
  });

  it("the Responses API's text.format json_schema and the messages dialect's output_config.format and strict tool are refused too", async () => {
    s.up.received = [];
    const r = await s.openai.responses.create({ model: incapable, input: 'hi', text: { format: { type: 'json_schema', name: 'x', schema } } }).catch((e: unknown) => e);
    expect(r).to.be.instanceOf(OpenAI.BadRequestError);
    expect((r as InstanceType<typeof OpenAI.BadRequestError>).code).to.equal('unsupported_parameter');
    const m = await s.anthropic.messages.create({ model: incapable, max_tokens: 10, messages: user, output_config: { format: { type: 'json_schema', schema } } }).catch((e: unknown) => e);
    expect(m, String(m)).to.be.instanceOf(Anthropic.BadRequestError);
    expect((m as InstanceType<typeof Anthropic.BadRequestError>).message).to.include('output_config.format');
    const t = await s.anthropic.messages.create({ model: incapable, max_tokens: 10, messages: user, tools: [{ name: 'find', input_schema: schema as never, strict: true }] }).catch((e: unknown) => e);
    expect(t, String(t)).to.be.instanceOf(Anthropic.BadRequestError);
    expect((t as InstanceType<typeof Anthropic.BadRequestError>).message).to.include('tools[0].strict');
    expect(s.up.received, 'nothing sent').to.have.length(0);
  });
});
