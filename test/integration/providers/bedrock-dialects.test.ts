import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';
import { CLAUDE, NOVA, seedBedrock } from './bedrock-setup';

/** The path the SDK calls (the model id URI-encoded, as AWS's serialiser writes it). */
const at = (model: string, op: 'converse' | 'converse-stream') => `/model/${encodeURIComponent(model)}/${op}`;

type Block = Record<string, any>;
type Sent = { messages: Array<{ role: string; content: Block[] }>; system?: Block[]; inferenceConfig?: Record<string, unknown>; toolConfig?: Record<string, any> };
const sent = (i = 0) => env().sim.log.entries[i];
const sentBody = (i = 0) => sent(i).body as Sent;
const lookup = { type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object', properties: { query: { type: 'string' } } } } };

/** Every dialect (chat completions, legacy completions, messages, responses), JSON and streamed, on Bedrock Converse upstreams. */
describe('bedrock upstream (Converse) through the gateway', () => {
  let o: TestOrg;
  let h: Record<string, string>;
  beforeEach(resetSim);
  before(async () => {
    await seedBedrock();
    o = await buildOrg(env().redis);
    h = keyHeader(o.key);
  });

  it('chat completions JSON: translated request, SigV4 for the region, canonical answer, billed from Converse usage', async () => {
    const r = await call('POST', '/v1/chat/completions', {
      headers: h,
      json: { model: 'sim-bedrock-claude', messages: [{ role: 'system', content: 'Sys.' }, { role: 'user', content: 'hi bedrock' }], max_tokens: 100, temperature: 0.5, top_p: 0.8, stop: ['zzz'] },
    });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ object: 'chat.completion', model: 'sim-bedrock-claude' });
    expect(r.body.choices[0].message).to.include({ role: 'assistant', refusal: null });
    expect(r.body.choices[0].message.content).to.include('hi bedrock');
    expect(r.body.choices[0].finish_reason).to.equal('stop');
    expect(sent().path).to.equal(at(CLAUDE, 'converse'));
    expect(sent().authorization).to.match(/^AWS4-HMAC-SHA256 Credential=AKIDSIMULATED\/\d{8}\/eu-west-1\/bedrock\/aws4_request, /);
    expect(sentBody()).to.deep.equal({
      system: [{ text: 'Sys.' }],
      messages: [{ role: 'user', content: [{ text: 'hi bedrock' }] }],
      inferenceConfig: { maxTokens: 100, temperature: 0.5, topP: 0.8, stopSequences: ['zzz'] },
      additionalModelResponseFieldPaths: ['/stop_sequence'],
    });
    await usageSettled();
    const [ev] = await UsageEvent.findAll({ where: { requestId: r.headers.get('x-service-request-id')! } });
    expect(ev).to.include({ model: 'sim-bedrock-claude', inputTokens: r.body.usage.prompt_tokens, outputTokens: r.body.usage.completion_tokens });
    expect(ev.inputTokens).to.be.greaterThan(0);
  });

  it('chat completions streamed: event-stream decoded into chunks, tool calls, finish and usage chunk', async () => {
    const s = await postSse('/v1/chat/completions', h, {
      model: 'sim-bedrock-claude',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'find it' }],
      tools: [lookup],
      tool_choice: 'required',
    });
    expect(s.status, s.text).to.equal(200);
    expect(sent().path).to.equal(at(CLAUDE, 'converse-stream'));
    expect(sentBody().toolConfig).to.deep.equal({ tools: [{ toolSpec: { name: 'lookup', inputSchema: { json: lookup.function.parameters } } }], toolChoice: { any: {} } });
    expect(s.events.at(-1)!.data).to.equal('[DONE]');
    const chunks = s.events.slice(0, -1).map((e) => e.data);
    expect(chunks.every((c) => c.model === 'sim-bedrock-claude' && c.object === 'chat.completion.chunk')).to.equal(true);
    // a turn of tool calls alone: content null, as OpenAI streams it and as the JSON answer has it
    expect(chunks[0].choices[0].delta).to.deep.equal({ role: 'assistant', content: null });
    const calls = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(calls[0]).to.deep.include({ index: 0, type: 'function', function: { name: 'lookup', arguments: '' } });
    expect(calls[0].id).to.match(/^tooluse_sim/);
    expect(JSON.parse(calls.map((c: { function: { arguments?: string } }) => c.function.arguments ?? '').join(''))).to.deep.equal({ query: 'find it' });
    expect(chunks.at(-2).choices[0].finish_reason).to.equal('tool_calls');
    expect(chunks.at(-1).choices).to.deep.equal([]);
    expect(chunks.at(-1).usage.completion_tokens).to.be.greaterThan(0);
  });

  it('keeps tool-use ids across a round trip with the official openai client (JSON then streamed)', async () => {
    const client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const tools: OpenAI.Chat.ChatCompletionTool[] = [lookup];
    const first = await client.chat.completions.create({ model: 'sim-bedrock-claude', messages: [{ role: 'user', content: 'use a tool for bees' }], tools });
    const tc = first.choices[0].message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
    expect(first.choices[0].finish_reason).to.equal('tool_calls');
    expect(JSON.parse(tc.function.arguments)).to.deep.equal({ query: 'use a tool for bees' });
    const stream = await client.chat.completions.create({
      model: 'sim-bedrock-claude',
      stream: true,
      tools,
      messages: [{ role: 'user', content: 'use a tool for bees' }, first.choices[0].message, { role: 'tool', tool_call_id: tc.id, content: 'bees: 12' }],
    });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
    expect(text).to.include('bees: 12');
    const second = sentBody(1).messages;
    expect(second[1]).to.deep.equal({ role: 'assistant', content: [{ toolUse: { toolUseId: tc.id, name: 'lookup', input: { query: 'use a tool for bees' } } }] });
    expect(second[2]).to.deep.equal({ role: 'user', content: [{ toolResult: { toolUseId: tc.id, content: [{ text: 'bees: 12' }] } }] });
  });

  /** A messages request (official Anthropic client) whose last user turn answers a `shot` tool call with `result` blocks. */
  const answerShot = (result: Anthropic.ContentBlockParam[]) =>
    new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 }).messages.create({
      model: 'sim-bedrock-claude',
      max_tokens: 50,
      tools: [{ name: 'shot', input_schema: { type: 'object', properties: {} } }],
      messages: [
        { role: 'user', content: 'take a screenshot' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'shot', input: {} }] },
        { role: 'user', content: result },
      ],
    });

  it('a messages tool_result holding only an image reaches a Claude model inside its toolResult (ToolResultContentBlock image), not as a blank result', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    await answerShot([{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }] }, { type: 'text', text: 'what is on it?' }]);
    expect(sentBody().messages[2]).to.deep.equal({
      role: 'user',
      content: [{ toolResult: { toolUseId: 'toolu_1', content: [{ image: { format: 'png', source: { bytes: png } } }] } }, { text: 'what is on it?' }],
    });
  });

  it('a messages tool_result with is_error reaches Converse as the toolResult’s status "error" (ToolResultBlock.status), its text unprefixed', async () => {
    await answerShot([{ type: 'tool_result', tool_use_id: 'toolu_1', is_error: true, content: 'no display' }]);
    expect(sentBody().messages[2]).to.deep.equal({ role: 'user', content: [{ toolResult: { toolUseId: 'toolu_1', content: [{ text: 'no display' }], status: 'error' } }] });
  });

  it('messages dialect JSON and streamed (official Anthropic client), tool_use ids from Bedrock', async () => {
    const client = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
    const msg = await client.messages.create({ model: 'sim-bedrock-claude', max_tokens: 200, system: 'Be brief.', messages: [{ role: 'user', content: 'hello messages' }], stop_sequences: ['zzz'] });
    expect(msg).to.include({ type: 'message', role: 'assistant', model: 'sim-bedrock-claude', stop_reason: 'end_turn' });
    expect((msg.content[0] as Anthropic.TextBlock).text).to.include('hello messages');
    expect(msg.usage.input_tokens).to.be.greaterThan(0);
    expect(sentBody(0)).to.deep.include({ system: [{ text: 'Be brief.' }], inferenceConfig: { maxTokens: 200, stopSequences: ['zzz'] } });

    const stream = client.messages.stream({
      model: 'sim-bedrock-claude',
      max_tokens: 200,
      messages: [{ role: 'user', content: 'weather please' }],
      tools: [{ name: 'weather', input_schema: { type: 'object', properties: { query: { type: 'string' } } } }],
      tool_choice: { type: 'any' },
    });
    const final = await stream.finalMessage();
    expect(final.stop_reason).to.equal('tool_use');
    const use = final.content.find((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock;
    expect(use).to.include({ name: 'weather' });
    expect(use.id).to.match(/^tooluse_sim/);
    expect(use.input).to.deep.equal({ query: 'weather please' });
    expect(sent(1).path).to.equal(at(CLAUDE, 'converse-stream'));
  });

  it('responses dialect JSON and streamed', async () => {
    const r = await call('POST', '/v1/responses', { headers: h, json: { model: 'sim-bedrock-claude', input: 'hello responses', instructions: 'Be brief.', max_output_tokens: 64 } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ object: 'response', status: 'completed', model: 'sim-bedrock-claude' });
    expect(r.body.output[0].content[0].text).to.include('hello responses');
    expect(r.body.usage.total_tokens).to.equal(r.body.usage.input_tokens + r.body.usage.output_tokens);
    expect(sentBody(0)).to.deep.include({ system: [{ text: 'Be brief.' }], inferenceConfig: { maxTokens: 64 } });

    const s = await postSse('/v1/responses', h, { model: 'sim-bedrock-claude', input: 'stream responses', stream: true });
    expect(s.status, s.text).to.equal(200);
    const types = s.events.map((e) => e.data.type);
    expect(types[0]).to.equal('response.created');
    expect(types.at(-1)).to.equal('response.completed');
    const text = s.events.filter((e) => e.data.type === 'response.output_text.delta').map((e) => e.data.delta).join('');
    expect(text).to.include('stream responses');
    expect(s.events.at(-1)!.data.response.usage.output_tokens).to.be.greaterThan(0);
  });

  it('legacy completions through the chat translation, JSON and streamed', async () => {
    const r = await call('POST', '/v1/completions', { headers: h, json: { model: 'sim-bedrock-claude', prompt: 'legacy hello', max_tokens: 50 } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ object: 'text_completion', model: 'sim-bedrock-claude' });
    expect(r.body.choices[0].text).to.include('legacy hello');
    const s = await postSse('/v1/completions', h, { model: 'sim-bedrock-claude', prompt: 'streamed legacy', stream: true });
    expect(s.status, s.text).to.equal(200);
    expect(s.events.slice(0, -1).map((e) => e.data.choices[0]?.text ?? '').join('')).to.include('streamed legacy');
    expect(sent(1).path).to.equal(at(CLAUDE, 'converse-stream'));
  });

  it('a Bedrock API key goes as a bearer token; images go as bytes; cache hints have no effect on a non-Claude model', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const content = [{ type: 'text', text: 'nova here', cache_control: { type: 'ephemeral' } }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }];
    const r = await call('POST', '/v1/chat/completions', { headers: h, json: { model: 'sim-bedrock-nova', messages: [{ role: 'user', content }] } });
    expect(r.status, r.text).to.equal(200);
    expect(sent().path).to.equal(at(NOVA, 'converse'));
    expect(sent().authorization).to.equal('Bearer ABSKsimulatedbedrockkey');
    // AWS's JSON protocol carries blob members base64-encoded
    expect(sentBody().messages).to.deep.equal([{ role: 'user', content: [{ text: 'nova here' }, { image: { format: 'png', source: { bytes: png } } }] }]);
  });

  it('cache_control on Claude becomes a cache point; cached tokens are reported and billed as input', async () => {
    const doc = `Reference document ${Math.random()}: ${'the quick brown fox jumps over the lazy dog '.repeat(40)}`;
    const body = { model: 'sim-bedrock-claude', messages: [{ role: 'user', content: [{ type: 'text', text: doc, cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'Summarise.' }] }] };
    const first = await call('POST', '/v1/chat/completions', { headers: h, json: body });
    expect(first.status, first.text).to.equal(200);
    expect(sentBody().messages[0].content).to.deep.equal([{ text: doc }, { cachePoint: { type: 'default' } }, { text: 'Summarise.' }]);
    expect(first.body.usage.prompt_tokens_details.cached_tokens).to.equal(0);
    const second = await call('POST', '/v1/chat/completions', { headers: h, json: body });
    const cached = second.body.usage.prompt_tokens_details.cached_tokens;
    expect(cached).to.be.greaterThan(300);
    expect(second.body.usage.prompt_tokens).to.equal(first.body.usage.prompt_tokens);
    await usageSettled();
    const [ev] = await UsageEvent.findAll({ where: { requestId: second.headers.get('x-service-request-id')! } });
    expect(ev.inputTokens).to.equal(second.body.usage.prompt_tokens);
  });

  it('the messages dialect passes cache_control to a Claude model as cache points (system and user blocks)', async () => {
    const doc = `Manual ${Math.random()}: ${'every gateway request passes through the canonical form '.repeat(40)}`;
    const client = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
    const ask = () =>
      client.messages.create({
        model: 'sim-bedrock-claude',
        max_tokens: 100,
        system: [{ type: 'text', text: 'You answer from the manual.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: [{ type: 'text', text: doc, cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'What does it say?' }] }],
      });
    const first = await ask();
    expect(sentBody().system).to.deep.equal([{ text: 'You answer from the manual.' }, { cachePoint: { type: 'default' } }]);
    expect(sentBody().messages[0].content).to.deep.equal([{ text: doc }, { cachePoint: { type: 'default' } }, { text: 'What does it say?' }]);
    expect(first.usage.cache_read_input_tokens ?? 0).to.equal(0);
    const second = await ask();
    expect(second.usage.cache_read_input_tokens).to.be.greaterThan(300);
  });

  it('json_schema response_format becomes outputConfig.textFormat', async () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const r = await call('POST', '/v1/chat/completions', { headers: h, json: { model: 'sim-bedrock-claude', messages: [{ role: 'user', content: 'json' }], response_format: { type: 'json_schema', json_schema: { name: 'thing', schema } } } });
    expect(r.status, r.text).to.equal(200);
    expect((sentBody() as Record<string, unknown>).outputConfig).to.deep.equal({ textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify(schema), name: 'thing' } } } });
  });
});
