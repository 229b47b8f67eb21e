import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { useGeminiModels } from '../../helpers/gemini-model';

const PLACEHOLDER = 'skip_thought_signature_validator';
const parameters = { type: 'object', properties: { query: { type: 'string' } } };
type Contents = Array<{ role: string; parts: Array<Record<string, unknown>> }>;
const contentsSent = (i = 0) => (env().sim.log.entries[i].body as { contents: Contents }).contents;

/**
 * Tool calls Gemini did not write (another model's, a caller's own history) reaching a Gemini
 * deployment in the current turn: Gemini 3 refuses a model step whose first functionCall has no
 * thoughtSignature (the simulator too), so the gateway sends Google's documented placeholder
 * (docs/providers/gemini.md, "Thought signatures on deployments of other kinds").
 */
describe('provider kind gemini: tool calls another model made', () => {
  let o: TestOrg;
  let client: OpenAI;
  beforeEach(resetSim);
  useGeminiModels();
  before(async () => {
    o = await buildOrg(env().redis);
    client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });

  it('chat completions: an OpenAI-style call_abc and its result in the current turn, answered 200, the placeholder on that functionCall', async () => {
    const r = await client.chat.completions.create({
      model: 'test-gemini',
      tools: [{ type: 'function', function: { name: 'lookup', description: 'Look it up', parameters } }],
      messages: [
        { role: 'user', content: 'look up bees' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'lookup', arguments: '{"query":"bees"}' } }] },
        { role: 'tool', tool_call_id: 'call_abc', content: 'bees: 12' },
      ],
    });
    expect(r.choices[0].message.content).to.include('bees: 12');
    expect(contentsSent()[1]).to.deep.equal({ role: 'model', parts: [{ functionCall: { id: 'call_abc', name: 'lookup', args: { query: 'bees' } }, thoughtSignature: PLACEHOLDER }] });
    expect(contentsSent()[2]).to.deep.equal({ role: 'user', parts: [{ functionResponse: { id: 'call_abc', name: 'lookup', response: { output: 'bees: 12' } } }] });
  });

  it('the messages dialect: tool_use / tool_result history written by Claude (or the caller), JSON and streamed', async () => {
    const h = { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' };
    const json = {
      model: 'test-gemini',
      max_tokens: 200,
      tools: [{ name: 'lookup', description: 'Look it up', input_schema: parameters }],
      messages: [
        { role: 'user', content: 'look up wasps' },
        { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 'toolu_01AbC', name: 'lookup', input: { query: 'wasps' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01AbC', content: 'wasps: 3' }] },
      ],
    };
    const r = await call('POST', '/v1/messages', { headers: h, json });
    expect(r.status, r.text).to.equal(200);
    expect(JSON.stringify(r.body.content)).to.include('wasps: 3');
    expect(contentsSent()[1]).to.deep.equal({ role: 'model', parts: [{ text: 'Checking.' }, { functionCall: { id: 'toolu_01AbC', name: 'lookup', args: { query: 'wasps' } }, thoughtSignature: PLACEHOLDER }] });
    const s = await call('POST', '/v1/messages', { headers: h, json: { ...json, stream: true } });
    expect(s.status, s.text).to.equal(200);
    expect(s.text).to.include('message_stop');
    expect(contentsSent(1)[1].parts[1].thoughtSignature).to.equal(PLACEHOLDER);
  });

  it('the responses dialect: function_call / function_call_output items, answered 200 with the placeholder', async () => {
    const r = await client.responses.create({
      model: 'test-gemini',
      tools: [{ type: 'function', name: 'lookup', description: 'Look it up', parameters, strict: false }],
      input: [
        { role: 'user', content: 'look up ants' },
        { type: 'function_call', call_id: 'call_resp1', name: 'lookup', arguments: '{"query":"ants"}' },
        { type: 'function_call_output', call_id: 'call_resp1', output: 'ants: 40' },
      ],
    });
    expect(r.output_text).to.include('ants: 40');
    expect(contentsSent()[1]).to.deep.equal({ role: 'model', parts: [{ functionCall: { id: 'call_resp1', name: 'lookup', args: { query: 'ants' } }, thoughtSignature: PLACEHOLDER }] });
  });
});
