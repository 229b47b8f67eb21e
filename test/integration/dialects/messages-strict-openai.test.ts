import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { ScriptedUpstream, byStream, chunk, completion, openAiStrictRefusal, usageChunk, type Received } from '../../helpers/scripted-upstream';

/**
 * Anthropic's structured outputs take schemas OpenAI's strict mode refuses, above all optional
 * properties (not in `required`). The messages dialect sent them to an OpenAI-compatible upstream as
 * strict function tools and a strict response format, which OpenAI refuses in its own words: the
 * Messages client got a refusal Anthropic never gives. Such a tool or format now goes non-strict
 * (`strict: false`), the others stay strict (workers/providers/openai/strict-fallback.ts). The
 * upstream here refuses strict schemas as OpenAI does (the simulator does not check them).
 */
describe('messages dialect: strict schemas Anthropic takes and OpenAI strict mode refuses (OpenAI-compatible upstream)', () => {
  let o: TestOrg;
  let client: Anthropic;
  let up: ScriptedUpstream;
  let model: string;
  /** Answers `answer` (JSON or streamed) unless the body's strict schemas are refused as OpenAI refuses them. */
  const serve = (json: unknown, events: unknown[]) => (r: Received) => openAiStrictRefusal(r.body) ?? byStream(json, events)(r);

  before(async () => {
    o = await buildOrg(env().redis);
    client = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
    up = await ScriptedUpstream.start('openai');
    model = await up.model();
  });
  after(() => up.close());
  beforeEach(() => up.reset());

  /** Valid for Anthropic's strict tools and JSON outputs: closed, `unit` optional. */
  const OPTIONAL = { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } }, required: ['city'], additionalProperties: false };
  /** What both take: every property required. */
  const ALL_REQUIRED = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
  const msgs = [{ role: 'user' as const, content: 'weather in Paris?' }];

  it('a strict tool with an optional property is served, JSON and streamed; it goes non-strict, a tool strict mode takes stays strict', async () => {
    const call = { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } };
    up.otherwise = serve(completion({ content: null, tool_calls: [call] }, 'tool_calls'), [
      chunk({ role: 'assistant', tool_calls: [{ index: 0, ...call }] }),
      chunk({}, 'tool_calls'),
      usageChunk(),
    ]);
    const params = {
      model,
      max_tokens: 100,
      messages: msgs,
      tool_choice: { type: 'any' as const },
      tools: [
        { name: 'weather', strict: true, input_schema: OPTIONAL },
        { name: 'city_time', strict: true, input_schema: ALL_REQUIRED },
      ],
    } as unknown as Anthropic.MessageCreateParamsNonStreaming;
    const json = await client.messages.create(params);
    const streamed = await client.messages.stream(params).finalMessage();
    for (const m of [json, streamed]) {
      expect(m.stop_reason).to.equal('tool_use');
      expect(m.content.find((b) => b.type === 'tool_use')).to.deep.include({ name: 'weather', input: { city: 'Paris' } });
    }
    expect(up.received).to.have.length(2);
    for (const r of up.received) {
      const [weather, cityTime] = r.body.tools.map((t: { function: Record<string, unknown> }) => t.function);
      // the schema as the client wrote it, the optional property kept optional
      expect(weather).to.deep.equal({ name: 'weather', parameters: OPTIONAL, strict: false });
      expect(cityTime).to.deep.equal({ name: 'city_time', parameters: ALL_REQUIRED, strict: true });
    }
  });

  it('output_config.format with an optional property is served, JSON and streamed, as a non-strict response format; one strict mode takes stays strict', async () => {
    const text = '{"city":"Paris"}';
    up.otherwise = serve(completion({ content: text }, 'stop'), [chunk({ role: 'assistant', content: text }), chunk({}, 'stop'), usageChunk()]);
    for (const schema of [OPTIONAL, ALL_REQUIRED]) {
      up.reset();
      const params = { model, max_tokens: 100, messages: msgs, output_config: { format: { type: 'json_schema', schema } } } as unknown as Anthropic.MessageCreateParamsNonStreaming;
      const json = await client.messages.create(params);
      const streamed = await client.messages.stream(params).finalMessage();
      for (const m of [json, streamed]) {
        expect(m.content).to.have.length(1);
        expect(m.content[0]).to.deep.include({ type: 'text', text });
      }
      for (const r of up.received) {
        expect(r.body.response_format).to.deep.equal({ type: 'json_schema', json_schema: { name: 'output', schema, strict: schema === ALL_REQUIRED } });
      }
    }
  });

  it("a strict tool over OpenAI's Structured Outputs limits (1001 enum values, which Anthropic takes) goes non-strict and is served; one at the limit stays strict", async () => {
    const values = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);
    const schema = (n: number) => ({ type: 'object', properties: { a: { type: 'string', enum: values(500) }, b: { type: 'string', enum: values(n) } }, required: ['a', 'b'], additionalProperties: false });
    const call = { id: 'call_1', type: 'function', function: { name: 'pick', arguments: '{"a":"v0","b":"v1"}' } };
    up.otherwise = serve(completion({ content: null, tool_calls: [call] }, 'tool_calls'), []);
    for (const [n, strict] of [[501, false], [500, true]] as Array<[number, boolean]>) {
      up.reset();
      const params = { model, max_tokens: 100, messages: msgs, tools: [{ name: 'pick', strict: true, input_schema: schema(n) }] } as unknown as Anthropic.MessageCreateParamsNonStreaming;
      const m = await client.messages.create(params);
      expect(m.stop_reason, `${n} values`).to.equal('tool_use');
      expect(up.received[0].body.tools[0].function, `${n} values`).to.deep.equal({ name: 'pick', parameters: schema(n), strict });
    }
  });
});
