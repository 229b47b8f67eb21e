import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';
import { leasesFreed } from '../../helpers/leases';
import { useGeminiModels, GEMINI_KEY } from '../../helpers/gemini-model';
import { expectAnthropic, expectOpenAI, expectResponsesEvent, responsesEventForDocument, withoutNullUser } from '../../helpers/conformance';

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const lookup = { type: 'function', function: { name: 'lookup', description: 'Look it up', parameters: { type: 'object', properties: { query: { type: 'string' } }, additionalProperties: false } } };
const sent = (i = 0) => env().sim.log.entries[i];

async function usageOf(requestId: string) {
  await usageSettled();
  return UsageEvent.findAll({ where: { requestId } });
}

/** The three dialects on a model whose provider is of kind `gemini` (the Gemini API). */
describe('provider kind gemini', () => {
  let o: TestOrg;
  beforeEach(resetSim);
  useGeminiModels();
  before(async () => {
    o = await buildOrg(env().redis);
  });

  it('chat completions JSON: contents, systemInstruction, generationConfig, the key header, usage billed', async () => {
    const r = await call('POST', '/v1/chat/completions', {
      headers: keyHeader(o.key),
      json: { model: 'test-gemini', messages: [{ role: 'system', content: 'Sys.' }, { role: 'user', content: [{ type: 'text', text: 'hi gemini' }, { type: 'image_url', image_url: { url: PNG } }] }], max_tokens: 100, temperature: 0.3, top_p: 0.9, stop: 'zzz' },
    });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ object: 'chat.completion', model: 'test-gemini' });
    expect(r.body.choices[0].message.content).to.include('hi gemini');
    expect(r.body.choices[0].finish_reason).to.equal('stop');
    expect(sent().path).to.equal('/v1beta/models/sim-gemini-1:generateContent');
    expect(sent().googApiKey).to.equal(GEMINI_KEY);
    expect(sent().authorization).to.equal(undefined);
    expect(sent().body).to.deep.equal({
      contents: [{ role: 'user', parts: [{ text: 'hi gemini' }, { inlineData: { mimeType: 'image/png', data: PNG.split(',')[1] } }] }],
      systemInstruction: { role: 'user', parts: [{ text: 'Sys.' }] },
      generationConfig: { maxOutputTokens: 100, temperature: 0.3, topP: 0.9, stopSequences: ['zzz'] },
    });
    const [ev] = await usageOf(r.headers.get('x-service-request-id')!);
    expect(r.body.usage.prompt_tokens).to.be.greaterThan(0);
    expect(ev.inputTokens).to.equal(r.body.usage.prompt_tokens);
    expect(ev.outputTokens).to.equal(r.body.usage.completion_tokens);
  });

  it('reports implicitly cached input and thought tokens in usage; thoughts come back as reasoning_content', async () => {
    const json = { model: 'test-gemini', messages: [{ role: 'system', content: 'A long shared instruction for caching.' }, { role: 'user', content: 'think about it' }], reasoning_effort: 'low' };
    await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json });
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json });
    expect(r.status, r.text).to.equal(200);
    expect((sent(1).body as { generationConfig: unknown }).generationConfig).to.deep.equal({ thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } });
    expect(r.body.choices[0].message.reasoning_content).to.equal('Considering: think about it');
    expect(r.body.choices[0].message.content).to.include('think about it');
    expect(r.body.usage.prompt_tokens_details.cached_tokens).to.be.greaterThan(0);
    expect(r.body.usage.completion_tokens_details.reasoning_tokens).to.be.greaterThan(0);
    const plain = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { ...json, reasoning_effort: undefined } });
    expect(plain.body.choices[0].message.content, 'the same answer without thoughts').to.equal(r.body.choices[0].message.content);
    expect(r.body.usage.completion_tokens - plain.body.usage.completion_tokens, 'thought tokens count as completion tokens').to.equal(r.body.usage.completion_tokens_details.reasoning_tokens);
    const [ev] = await usageOf(r.headers.get('x-service-request-id')!);
    expect(ev.outputTokens, 'thought tokens are billed output').to.equal(r.body.usage.completion_tokens);
  });

  it('JSON mode and JSON schema go as responseMimeType and responseJsonSchema', async () => {
    const schema = { type: 'object', properties: { reply: { type: 'string' } }, required: ['reply'], additionalProperties: false };
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'test-gemini', messages: [{ role: 'user', content: 'json please' }], response_format: { type: 'json_schema', json_schema: { name: 'out', schema } } } });
    expect(r.status, r.text).to.equal(200);
    expect(JSON.parse(r.body.choices[0].message.content).reply).to.include('json please');
    expect((sent().body as { generationConfig: unknown }).generationConfig).to.deep.equal({ responseMimeType: 'application/json', responseJsonSchema: schema });
    const j = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'test-gemini', messages: [{ role: 'user', content: 'json' }], response_format: { type: 'json_object' } } });
    expect(j.status, j.text).to.equal(200);
    expect((sent(1).body as { generationConfig: unknown }).generationConfig).to.deep.equal({ responseMimeType: 'application/json' });
  });

  it('a tool round trip with the official openai client: ids, thought signature and function names kept', async () => {
    const client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const tools = [lookup] as OpenAI.Chat.ChatCompletionTool[];
    const first = await client.chat.completions.create({ model: 'test-gemini', messages: [{ role: 'user', content: 'use a tool for bees' }], tools, tool_choice: 'auto' });
    expect(first.choices[0].finish_reason).to.equal('tool_calls');
    const tc = first.choices[0].message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
    expect(tc.id).to.match(/^call_[0-9a-f]{18}_sig_[A-Za-z0-9_-]+$/);
    expect(JSON.parse(tc.function.arguments)).to.deep.equal({ query: 'use a tool for bees' });
    expect(sent().body).to.deep.include({
      tools: [{ functionDeclarations: [{ name: 'lookup', description: 'Look it up', parametersJsonSchema: lookup.function.parameters }] }],
      toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
    });
    const stream = await client.chat.completions.create({
      model: 'test-gemini',
      stream: true,
      tools,
      messages: [{ role: 'user', content: 'use a tool for bees' }, first.choices[0].message, { role: 'tool', tool_call_id: tc.id, content: 'bees: 12' }],
    });
    let text = '';
    let finish: string | null = null;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    expect(text).to.include('bees: 12');
    expect(finish).to.equal('stop');
    const contents = (sent(1).body as { contents: Array<{ role: string; parts: Array<Record<string, unknown>> }> }).contents;
    const signature = contents[1].parts[0].thoughtSignature;
    expect(contents[1]).to.deep.equal({ role: 'model', parts: [{ functionCall: { name: 'lookup', args: { query: 'use a tool for bees' } }, thoughtSignature: signature }] });
    expect(signature, 'the signature Gemini sent comes back').to.be.a('string').and.have.length.greaterThan(10);
    expect(contents[2]).to.deep.equal({ role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { output: 'bees: 12' } } }] });
  });

  it("keeps Gemini's functionCall.id as the tool-call id (JSON and streamed) and sends it back in functionCall.id and functionResponse.id", async () => {
    env().sim.knobs.set('sim-gemini-1', { callIds: true });
    const client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const tools = [lookup] as OpenAI.Chat.ChatCompletionTool[];
    const ask = [{ role: 'user' as const, content: 'use a tool for wasps' }];
    const first = await client.chat.completions.create({ model: 'test-gemini', messages: ask, tools });
    const tc = first.choices[0].message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
    expect(tc.id, "Gemini's id, then the thought signature").to.match(/^[0-9a-f]{12}_sig_[A-Za-z0-9_-]+$/);
    const geminiId = tc.id.split('_sig_')[0];
    let streamedId = '';
    for await (const c of await client.chat.completions.create({ model: 'test-gemini', stream: true, messages: ask, tools })) streamedId ||= c.choices[0]?.delta?.tool_calls?.[0]?.id ?? '';
    expect(streamedId).to.match(/^[0-9a-f]{12}_sig_/).and.not.equal(tc.id);
    const reply = await client.chat.completions.create({ model: 'test-gemini', tools, messages: [...ask, first.choices[0].message, { role: 'tool', tool_call_id: tc.id, content: 'wasps: 3' }] });
    expect(reply.choices[0].message.content).to.include('wasps: 3');
    const contents = (sent(2).body as { contents: Array<{ role: string; parts: Array<Record<string, any>> }> }).contents;
    expect(contents[1].parts[0].functionCall).to.deep.equal({ id: geminiId, name: 'lookup', args: { query: 'use a tool for wasps' } });
    expect(contents[1].parts[0].thoughtSignature).to.be.a('string');
    expect(contents[2]).to.deep.equal({ role: 'user', parts: [{ functionResponse: { id: geminiId, name: 'lookup', response: { output: 'wasps: 3' } } }] });
  });

  it('streams chat chunks: role first, text, a whole tool call, finish, the usage chunk; [DONE]', async () => {
    const s = await postSse('/v1/chat/completions', keyHeader(o.key), {
      model: 'test-gemini',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'find it' }],
      tools: [lookup],
      tool_choice: { type: 'function', function: { name: 'lookup' } },
    });
    expect(s.status, s.text).to.equal(200);
    expect(sent().path).to.equal('/v1beta/models/sim-gemini-1:streamGenerateContent');
    expect(sent().query).to.deep.equal({ alt: 'sse' });
    expect((sent().body as { toolConfig: unknown }).toolConfig).to.deep.equal({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['lookup'] } });
    expect(s.events.at(-1)!.data).to.equal('[DONE]');
    const chunks = s.events.slice(0, -1).map((e) => e.data);
    expect(chunks.every((c) => c.model === 'test-gemini' && c.object === 'chat.completion.chunk')).to.equal(true);
    // a turn of tool calls alone: content null, as OpenAI streams it and as the JSON answer has it
    expect(chunks[0].choices[0].delta).to.deep.equal({ role: 'assistant', content: null });
    const calls = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(calls).to.have.length(1);
    expect(calls[0]).to.deep.include({ index: 0, type: 'function', function: { name: 'lookup', arguments: JSON.stringify({ query: 'find it' }) } });
    expect(chunks.at(-2).choices[0].finish_reason).to.equal('tool_calls');
    expect(chunks.at(-1).choices).to.deep.equal([]);
    expect(chunks.at(-1).usage.completion_tokens).to.be.greaterThan(0);
  });

  it('streamed log probabilities (chat and responses): each chunk’s logprobsResult comes back on its text delta, every token once', async () => {
    const s = await postSse('/v1/chat/completions', keyHeader(o.key), { model: 'test-gemini', stream: true, logprobs: true, top_logprobs: 2, reasoning_effort: 'low', messages: [{ role: 'user', content: 'count the bees' }] });
    expect(s.status, s.text).to.equal(200);
    expect((sent().body as { generationConfig: unknown }).generationConfig).to.deep.include({ responseLogprobs: true, logprobs: 2 });
    const chunks = s.events.slice(0, -1).map((e) => e.data);
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    const tokens = chunks.flatMap((c) => c.choices[0]?.logprobs?.content ?? []);
    expect(tokens.map((t: { token: string }) => t.token).join('')).to.equal(text);
    expect(tokens[0].top_logprobs).to.have.length(2);
    expect(chunks.filter((c) => c.choices[0]?.logprobs).every((c) => typeof c.choices[0].delta.content === 'string')).to.equal(true);
    const r = await postSse('/v1/responses', keyHeader(o.key), { model: 'test-gemini', stream: true, top_logprobs: 1, include: ['message.output_text.logprobs'], reasoning: { effort: 'low' }, input: 'count the bees' });
    const deltas = r.events.filter((e) => e.event === 'response.output_text.delta').map((e) => e.data);
    expect(deltas.flatMap((d) => d.logprobs).map((t: { token: string }) => t.token).join('')).to.equal(deltas.map((d) => d.delta).join(''));
    expect(deltas.map((d) => d.logprobs.length), JSON.stringify(deltas)).to.deep.equal(deltas.map(() => 1));
  });

  it('the messages dialect, JSON and streamed, with a tool round trip', async () => {
    const h = { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' };
    const tools = [{ name: 'lookup', input_schema: { type: 'object', properties: { query: { type: 'string' } } } }];
    const first = await call('POST', '/v1/messages', { headers: h, json: { model: 'test-gemini', max_tokens: 200, system: 'Be brief.', tools, messages: [{ role: 'user', content: 'please use a tool for Paris' }] } });
    expect(first.status, first.text).to.equal(200);
    expect(first.body).to.include({ type: 'message', model: 'test-gemini', stop_reason: 'tool_use' });
    const use = first.body.content.find((b: { type: string }) => b.type === 'tool_use');
    expect(use).to.deep.include({ name: 'lookup', input: { query: 'please use a tool for Paris' } });
    expect(use.id, "Anthropic's tool_use id pattern").to.match(/^[a-zA-Z0-9_-]+$/);
    expect((sent().body as { systemInstruction: unknown }).systemInstruction).to.deep.equal({ role: 'user', parts: [{ text: 'Be brief.' }] });
    const s = await postSse('/v1/messages', h, {
      model: 'test-gemini',
      max_tokens: 200,
      stream: true,
      tools,
      messages: [{ role: 'user', content: 'please use a tool for Paris' }, { role: 'assistant', content: first.body.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny' }] }],
    });
    expect(s.status, s.text).to.equal(200);
    const types = s.events.map((e) => e.data.type);
    expect(types[0]).to.equal('message_start');
    expect(types.at(-1)).to.equal('message_stop');
    const text = s.events.filter((e) => e.data.type === 'content_block_delta').map((e) => e.data.delta.text ?? '').join('');
    expect(text).to.include('sunny');
    expect(s.events.find((e) => e.data.type === 'message_delta')!.data.delta.stop_reason).to.equal('end_turn');
    expect((sent(1).body as { contents: unknown[] }).contents[2]).to.deep.equal({ role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { output: 'sunny' } } }] });
    // a failed result: FunctionResponse.response's documented "error" key (@google/genai), not an output starting "Error: "
    const failed = [{ role: 'user', content: 'please use a tool for Paris' }, { role: 'assistant', content: first.body.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, is_error: true, content: 'no network' }] }];
    expect((await call('POST', '/v1/messages', { headers: h, json: { model: 'test-gemini', max_tokens: 200, tools, messages: failed } })).status).to.equal(200);
    expect((sent(2).body as { contents: unknown[] }).contents[2]).to.deep.equal({ role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { error: 'no network' } } }] });
    const t = await call('POST', '/v1/messages', { headers: h, json: { model: 'test-gemini', max_tokens: 200, thinking: { type: 'adaptive' }, output_config: { effort: 'medium' }, messages: [{ role: 'user', content: 'ponder' }] } });
    expect(t.status, t.text).to.equal(200);
    expect(t.body.content[0]).to.deep.include({ type: 'thinking', thinking: 'Considering: ponder' });
    expect((sent(3).body as { generationConfig: unknown }).generationConfig).to.deep.equal({ maxOutputTokens: 200, thinkingConfig: { thinkingBudget: 8192, includeThoughts: true } });
    // an effort without thinking turned on: the thoughts are not a thinking block (Anthropic answers none then), their tokens are still counted
    const quiet = await call('POST', '/v1/messages', { headers: h, json: { model: 'test-gemini', max_tokens: 200, output_config: { effort: 'medium' }, messages: [{ role: 'user', content: 'ponder' }] } });
    expect(quiet.status, quiet.text).to.equal(200);
    expect(quiet.body.content.map((b: { type: string }) => b.type)).to.deep.equal(['text']);
    expect(quiet.body.usage.output_tokens_details.thinking_tokens).to.be.greaterThan(0);
  });

  it('the responses dialect, JSON and streamed', async () => {
    const r = await call('POST', '/v1/responses', { headers: keyHeader(o.key), json: { model: 'test-gemini', instructions: 'Be kind.', input: 'hello responses', max_output_tokens: 64 } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ object: 'response', status: 'completed', model: 'test-gemini' });
    expect(r.body.output_text ?? JSON.stringify(r.body.output)).to.include('hello responses');
    expect(sent().body).to.deep.include({ systemInstruction: { role: 'user', parts: [{ text: 'Be kind.' }] }, generationConfig: { maxOutputTokens: 64 } });
    const s = await postSse('/v1/responses', keyHeader(o.key), { model: 'test-gemini', input: 'streamed responses', stream: true });
    expect(s.status, s.text).to.equal(200);
    const done = s.events.find((e) => e.data.type === 'response.completed')!.data.response;
    expect(JSON.stringify(done.output)).to.include('streamed responses');
    expect(done.usage.output_tokens).to.be.greaterThan(0);
    expect(sent(1).path).to.equal('/v1beta/models/sim-gemini-1:streamGenerateContent');
    const t = await call('POST', '/v1/responses', { headers: keyHeader(o.key), json: { model: 'test-gemini', input: 'think first', reasoning: { effort: 'high' } } });
    expect(t.status, t.text).to.equal(200);
    expect((sent(2).body as { generationConfig: unknown }).generationConfig).to.deep.equal({ thinkingConfig: { thinkingBudget: 24576, includeThoughts: true } });
    expect(t.body.usage.output_tokens_details.reasoning_tokens, 'thought tokens reported').to.be.greaterThan(0);
  });

  it('the responses dialect: a function call carrying its thought signature is answered with its call_id whole (longer than 64), JSON and streamed', async () => {
    const client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const tools = [{ type: 'function' as const, name: 'lookup', description: 'Look it up', parameters: lookup.function.parameters, strict: false }];
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'use a tool for ants' }];
    const first = await client.responses.create({ model: 'test-gemini', input, tools });
    const fc = first.output.find((i) => i.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    expect(fc.call_id, 'the signature rides in the id, longer than OpenAI ids').to.match(/_sig_/).and.have.length.greaterThan(64);
    const signature = fc.call_id.split('_sig_')[1];
    const turn = [...input, fc, { type: 'function_call_output' as const, call_id: fc.call_id, output: 'ants: 40' }];
    const reply = await client.responses.create({ model: 'test-gemini', input: turn, tools });
    expect(reply.output_text).to.include('ants: 40');
    const contents = (sent(1).body as { contents: Array<{ role: string; parts: Array<Record<string, any>> }> }).contents;
    expect(Buffer.from(contents[1].parts[0].thoughtSignature, 'base64').toString('base64url'), 'the signature goes back to Gemini').to.equal(signature);
    let text = '';
    for await (const e of await client.responses.create({ model: 'test-gemini', input: turn, tools, stream: true })) if (e.type === 'response.output_text.delta') text += e.delta;
    expect(text).to.include('ants: 40');
    // an id without a signature is still held to OpenAI's 64
    const long = 'c'.repeat(65);
    const r = await call('POST', '/v1/responses', { headers: keyHeader(o.key), json: { model: 'test-gemini', tools, input: [...input, { type: 'function_call', call_id: long, name: 'lookup', arguments: '{}' }, { type: 'function_call_output', call_id: long, output: 'x' }] } });
    expect(r.status, r.text).to.equal(400);
    expect(r.body.error).to.include({ code: 'string_above_max_length', param: 'input[2].call_id' });
  });

  it('legacy completions through the chat translation, JSON and streamed', async () => {
    const r = await call('POST', '/v1/completions', { headers: keyHeader(o.key), json: { model: 'test-gemini', prompt: 'legacy gemini', max_tokens: 50 } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ object: 'text_completion', model: 'test-gemini' });
    expect(r.body.choices[0].text).to.include('legacy gemini');
    expect(sent().body).to.deep.equal({ contents: [{ role: 'user', parts: [{ text: 'legacy gemini' }] }], generationConfig: { maxOutputTokens: 50 } });
    const s = await postSse('/v1/completions', keyHeader(o.key), { model: 'test-gemini', prompt: 'streamed legacy', stream: true });
    expect(s.status, s.text).to.equal(200);
    const chunks = s.events.slice(0, -1).map((e) => e.data);
    expect(chunks.every((c) => c.object === 'text_completion')).to.equal(true);
    expect(chunks.map((c) => c.choices[0].text).join('')).to.include('streamed legacy');
  });

  it('embeddings through batchEmbedContents, dimensions as outputDimensionality, billed on the gateway count', async () => {
    const r = await call('POST', '/v1/embeddings', { headers: keyHeader(o.key), json: { model: 'test-gemini-embed', input: ['alpha beta', 'gamma'], dimensions: 8 } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.data).to.have.length(2);
    expect(r.body.data.map((d: { embedding: number[] }) => d.embedding.length)).to.deep.equal([8, 8]);
    expect(sent().path).to.equal('/v1beta/models/sim-gemini-embed-1:batchEmbedContents');
    expect(sent().body).to.deep.equal({ requests: [
      { model: 'models/sim-gemini-embed-1', content: { role: 'user', parts: [{ text: 'alpha beta' }] }, outputDimensionality: 8 },
      { model: 'models/sim-gemini-embed-1', content: { role: 'user', parts: [{ text: 'gamma' }] }, outputDimensionality: 8 },
    ] });
    const [ev] = await usageOf(r.headers.get('x-service-request-id')!);
    expect(ev.inputTokens).to.equal(r.body.usage.prompt_tokens).and.to.be.greaterThan(0);
  });

  // Gemini: "BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch" (a 400);
  // OpenAI's API, which the caller speaks, takes 2048 inputs
  it('embeds more inputs than one Gemini batch takes as consecutive batches of 100, in order, billed once', async () => {
    const input = Array.from({ length: 250 }, (_, i) => `item ${i} ${'abcdefghij'[i % 10]}`);
    const r = await call('POST', '/v1/embeddings', { headers: keyHeader(o.key), json: { model: 'test-gemini-embed', input } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.data.map((d: { index: number }) => d.index)).to.deep.equal(input.map((_, i) => i));
    const batches = env().sim.log.entries.map((e) => (e.body as { requests: Array<{ content: { parts: Array<{ text: string }> } }> }).requests);
    expect(batches.map((b) => b.length)).to.deep.equal([100, 100, 50]);
    expect(batches.flat().map((q) => q.content.parts[0].text)).to.deep.equal(input);
    // each vector is its own input's: the same as that input embedded alone
    resetSim();
    const one = await call('POST', '/v1/embeddings', { headers: keyHeader(o.key), json: { model: 'test-gemini-embed', input: input[137] } });
    expect(r.body.data[137].embedding).to.deep.equal(one.body.data[0].embedding);
    const events = await usageOf(r.headers.get('x-service-request-id')!);
    expect(events).to.have.length(1);
    expect(events[0].inputTokens).to.equal(r.body.usage.prompt_tokens);
  });

  it("answers conform to OpenAI's and Anthropic's published documents (text, tool calls, reasoning, chunks, events)", async () => {
    const h = keyHeader(o.key);
    for (const extra of [{}, { tools: [lookup], tool_choice: 'required' }, { reasoning_effort: 'low' }]) {
      const r = await call('POST', '/v1/chat/completions', { headers: h, json: { model: 'test-gemini', messages: [{ role: 'user', content: 'conform' }], ...extra } });
      expect(r.status, r.text).to.equal(200);
      expectOpenAI('CreateChatCompletionResponse', r.body);
      const s = await postSse('/v1/chat/completions', h, { model: 'test-gemini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'conform' }], ...extra });
      for (const e of s.events.slice(0, -1)) expectOpenAI('CreateChatCompletionStreamResponse', e.data);
    }
    const resp = await call('POST', '/v1/responses', { headers: h, json: { model: 'test-gemini', input: 'use the tool', tools: [{ type: 'function', ...lookup.function }] } });
    expect(resp.body.output.map((i: { type: string }) => i.type)).to.include('function_call');
    expectOpenAI('Response', withoutNullUser(resp.body));
    const rs = await postSse('/v1/responses', h, { model: 'test-gemini', input: 'hello', stream: true });
    for (const e of rs.events) expectResponsesEvent(responsesEventForDocument(e.data));
    const m = await call('POST', '/v1/messages', { headers: { ...h, 'anthropic-version': '2023-06-01' }, json: { model: 'test-gemini', max_tokens: 100, output_config: { effort: 'low' }, messages: [{ role: 'user', content: 'conform' }] } });
    expect(m.status, m.text).to.equal(200);
    expectAnthropic('Message', m.body);
  });

  it('refuses what Gemini cannot express with 400 unsupported_parameter naming the field: no upstream call, nothing billed, lane freed', async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    const m = [{ role: 'user', content: 'x' }];
    for (const [param, extra] of [
      ['logit_bias', { logit_bias: { 42: 5 } }],
      ['parallel_tool_calls', { tools: [lookup], parallel_tool_calls: false }],
      ['tools[0]', { tools: [{ type: 'custom', custom: { name: 'x' } }] }],
      ['messages[0].content[0].image_url', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] }],
    ] as const) {
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'test-gemini', messages: m, ...extra } });
      expect(r.status, `${param}: ${r.text}`).to.equal(400);
      expect(r.body.error).to.include({ code: 'unsupported_parameter', param });
      expect(r.body.error.message).to.include(param);
    }
    expect(env().sim.log.entries).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
    expect(await leasesFreed(env().gw.ctx.leases, o.org.id, 'chat', 'interactive')).to.equal(true);
  });

  it('an upstream failure mid-stream and a refused credential: the caller sees the gateway error, never the key', async () => {
    env().sim.knobs.set('sim-gemini-1', { dropAfterChunks: 2 });
    const s = await postSse('/v1/chat/completions', keyHeader(o.key), { model: 'test-gemini', stream: true, messages: [{ role: 'user', content: 'a long answer please' }] });
    expect(s.status).to.equal(200);
    expect(s.events.at(-1)!.data.error.code).to.equal('upstream_error');
    env().sim.knobs.set('sim-gemini-1', { status: 403 });
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'test-gemini', messages: [{ role: 'user', content: 'x' }] } });
    expect(r.status).to.equal(502);
    expect(r.body.error.code).to.equal('upstream_auth_failed');
    expect(r.text).to.not.include(GEMINI_KEY);
    env().sim.knobs.set('sim-gemini-1', { status: 404 });
    const nf = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'test-gemini', messages: [{ role: 'user', content: 'x' }] } });
    expect(nf.status).to.equal(400);
    expect(nf.body.error.code).to.equal('upstream_invalid_request');
    expect(nf.body.error.message, "Google's error message is passed on").to.include('simulated status 404');
  });

  it("a 429 is retried after Retry-After and billed once; a caller's own key goes in x-goog-api-key instead of the platform's", async () => {
    env().sim.knobs.set('sim-gemini-1', { status: 429, statusTimes: 1, retryAfter: 0 });
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'test-gemini', messages: [{ role: 'user', content: 'retry me' }] } });
    expect(r.status, r.text).to.equal(200);
    expect(env().sim.log.entries).to.have.length(2);
    expect(await usageOf(r.headers.get('x-service-request-id')!)).to.have.length(1);
    const own = await call('POST', '/v1/chat/completions', { headers: { ...keyHeader(o.key), authorization: 'Bearer AIza-callers-own' }, json: { model: 'test-gemini', messages: [{ role: 'user', content: 'mine' }] } });
    expect(own.status, own.text).to.equal(200);
    expect(sent(2).googApiKey).to.equal('AIza-callers-own');
  });
});
