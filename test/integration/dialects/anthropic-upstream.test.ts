import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';

/** The chat-completions dialect on a model whose upstream speaks Anthropic messages. */
describe('chat completions on an Anthropic-native upstream (sim-claude)', () => {
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
  });

  it('answers JSON translated from a Message, with usage and a usage event', async () => {
    const r = await call('POST', '/v1/chat/completions', {
      headers: keyHeader(o.key),
      json: { model: 'sim-claude', messages: [{ role: 'system', content: 'Sys.' }, { role: 'user', content: 'hi claude' }], max_tokens: 100, stop: ['zzz'] },
    });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ object: 'chat.completion', model: 'sim-claude' });
    expect(r.body.choices[0].message.content).to.include('hi claude');
    expect(r.body.choices[0].finish_reason).to.equal('stop');
    const sent = env().sim.log.entries[0];
    expect(sent.path).to.equal('/v1/messages');
    expect(sent.body).to.deep.include({ model: 'sim-claude-1', system: 'Sys.', max_tokens: 100, stop_sequences: ['zzz'], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi claude' }] }] });
    await usageSettled();
    const [ev] = await UsageEvent.findAll({ where: { requestId: r.headers.get('x-service-request-id')! } });
    expect(ev.inputTokens).to.equal(r.body.usage.prompt_tokens);
    expect(ev.outputTokens).to.equal(r.body.usage.completion_tokens);
  });

  it('streams chunks with tool calls and the usage chunk when asked', async () => {
    const s = await postSse('/v1/chat/completions', keyHeader(o.key), {
      model: 'sim-claude',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'find it' }],
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }],
      tool_choice: 'required',
    });
    expect(s.status, s.text).to.equal(200);
    expect(s.events.at(-1)!.data).to.equal('[DONE]');
    const chunks = s.events.slice(0, -1).map((e) => e.data);
    expect(chunks.every((c) => c.model === 'sim-claude' && c.object === 'chat.completion.chunk')).to.equal(true);
    // a turn of tool calls alone: content null, as OpenAI streams it and as the JSON answer has it
    expect(chunks[0].choices[0].delta).to.deep.equal({ role: 'assistant', content: null });
    const calls = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(calls[0]).to.deep.include({ index: 0, type: 'function', function: { name: 'lookup', arguments: '' } });
    expect(JSON.parse(calls.map((c: { function: { arguments?: string } }) => c.function.arguments ?? '').join(''))).to.deep.equal({ query: 'find it' });
    expect(chunks.at(-2).choices[0].finish_reason).to.equal('tool_calls');
    const usage = chunks.at(-1);
    expect(usage.choices).to.deep.equal([]);
    expect(usage.usage.completion_tokens).to.be.greaterThan(0);
    expect((env().sim.log.entries[0].body as { tool_choice: unknown }).tool_choice).to.deep.equal({ type: 'any' });
  });

  it('works with the official openai client, including a tool round trip', async () => {
    const client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const tools: OpenAI.Chat.ChatCompletionTool[] = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { query: { type: 'string' } } } } }];
    const first = await client.chat.completions.create({ model: 'sim-claude', messages: [{ role: 'user', content: 'use a tool for bees' }], tools });
    const tc = first.choices[0].message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
    expect(first.choices[0].finish_reason).to.equal('tool_calls');
    expect(JSON.parse(tc.function.arguments)).to.deep.equal({ query: 'use a tool for bees' });
    const stream = await client.chat.completions.create({
      model: 'sim-claude',
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
  });

  it('answers legacy completions through the chat translation, JSON and streamed, billed once each', async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    const r = await call('POST', '/v1/completions', { headers: keyHeader(o.key), json: { model: 'sim-claude', prompt: 'legacy hello', max_tokens: 50, stop: 'zzz' } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ object: 'text_completion', model: 'sim-claude' });
    expect(r.body.id).to.match(/^cmpl-/);
    expect(r.body.choices[0]).to.include({ index: 0, logprobs: null, finish_reason: 'stop' });
    expect(r.body.choices[0].text).to.include('legacy hello');
    expect(r.body.usage.completion_tokens).to.be.greaterThan(0);
    const sent = env().sim.log.entries[0];
    expect(sent.path).to.equal('/v1/messages');
    expect(sent.body).to.deep.include({ model: 'sim-claude-1', max_tokens: 50, stop_sequences: ['zzz'], messages: [{ role: 'user', content: [{ type: 'text', text: 'legacy hello' }] }] });

    const s = await postSse('/v1/completions', keyHeader(o.key), { model: 'sim-claude', prompt: ['streamed legacy'], stream: true, stream_options: { include_usage: true } });
    expect(s.status, s.text).to.equal(200);
    expect(s.events.at(-1)!.data).to.equal('[DONE]');
    const chunks = s.events.slice(0, -1).map((e) => e.data);
    expect(chunks.every((c) => c.object === 'text_completion' && c.model === 'sim-claude')).to.equal(true);
    expect(chunks.slice(0, -1).map((c) => c.choices[0].text).join('')).to.include('streamed legacy');
    expect(chunks.at(-2).choices[0].finish_reason).to.equal('stop');
    expect(chunks.at(-1).choices).to.deep.equal([]);
    expect(chunks.at(-1).usage.completion_tokens).to.be.greaterThan(0);
    expect((env().sim.log.entries[1].body as { max_tokens: number }).max_tokens, "OpenAI's legacy default").to.equal(16);

    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before + 2);
    const [ev] = await UsageEvent.findAll({ where: { requestId: r.headers.get('x-service-request-id')! } });
    expect(ev.outputTokens).to.equal(r.body.usage.completion_tokens);
  });

  it('refuses what the translation cannot express, before any upstream call or billing', async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    for (const extra of [{ prompt: [1, 2, 3] }, { prompt: ['a', 'b'] }, { echo: true }, { suffix: 'x' }, { logprobs: 2 }, { n: 2 }]) {
      const r = await call('POST', '/v1/completions', { headers: keyHeader(o.key), json: { model: 'sim-claude', prompt: 'x', ...extra } });
      expect(r.status, JSON.stringify(extra)).to.equal(400);
      const param = Object.keys(extra)[0];
      expect(r.body).to.deep.equal({ error: { code: 'unsupported_parameter', message: r.body.error.message, type: 'invalid_request_error', param } });
    }
    expect(env().sim.log.entries).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
  });
});
