import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { ScriptedUpstream } from '../../helpers/scripted-upstream';

/**
 * OpenAI's structured outputs (`response_format` / the Responses API's `text.format` with a JSON
 * schema) on a model whose upstream speaks Anthropic's messages API: sent as Anthropic's
 * `output_config.format` (platform.claude.com, structured outputs; the SDK's OutputConfig /
 * JSONOutputFormat), not dropped. JSON mode without a schema has no messages form and is not sent.
 */
const schema = { type: 'object', properties: { city: { type: 'string' }, temp_c: { type: 'number' } }, required: ['city', 'temp_c'], additionalProperties: false };
const answer = { city: 'Paris', temp_c: 21 };
const message = { id: 'msg_s', type: 'message', role: 'assistant', model: 'up', content: [{ type: 'text', text: JSON.stringify(answer) }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 12, output_tokens: 9 } };

describe('structured outputs on an Anthropic-native upstream', function () {
  this.timeout(30_000);
  let up: ScriptedUpstream;
  let model: string;
  let client: OpenAI;
  beforeEach(resetSim);
  before(async () => {
    up = await ScriptedUpstream.start('anthropic');
    up.otherwise = () => ({ kind: 'json', body: message });
    model = await up.model();
    client = new OpenAI({ apiKey: (await buildOrg(env().redis)).key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  after(() => up.close());

  it('chat completions: a json_schema response_format is output_config.format with the schema as given; the answer parses', async () => {
    up.received = [];
    const r = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'weather in Paris?' }],
      response_format: { type: 'json_schema', json_schema: { name: 'weather', schema, strict: true } },
    });
    expect(JSON.parse(r.choices[0].message.content!)).to.deep.equal(answer);
    expect(up.received).to.have.length(1);
    expect(up.received[0].body.output_config).to.deep.equal({ format: { type: 'json_schema', schema } });
  });

  it('responses: text.format json_schema is output_config.format too', async () => {
    up.received = [];
    const r = await client.responses.create({ model, input: 'weather in Paris?', text: { format: { type: 'json_schema', name: 'weather', schema, strict: true } } });
    expect(JSON.parse(r.output_text)).to.deep.equal(answer);
    expect(up.received[0].body.output_config).to.deep.equal({ format: { type: 'json_schema', schema } });
  });

  it('JSON mode without a schema and plain text send no output_config', async () => {
    up.received = [];
    await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'answer in JSON' }], response_format: { type: 'json_object' } });
    await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'text' } });
    expect(up.received.map((q) => q.body.output_config)).to.deep.equal([undefined, undefined]);
  });
});
