import { expect } from 'chai';
import { CohereClient, type Cohere } from 'cohere-ai';
import { env } from '../../helpers/harness';
import { call, keyHeader } from '../../helpers/http';
import { expectCohereV1ChatEvent, expectCohereV1ChatResponse } from '../../helpers/conformance';
import { parseSse } from '../../helpers/sse-events';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';
import { openaiOrg } from '../../helpers/openai-org';

type Sent = { messages: Array<Record<string, unknown>>; tools?: Array<{ function: { name: string; parameters: unknown } }> };
const sentBody = () => env().sim.log.entries.at(-1)!.body as Sent;
const lookup: Cohere.Tool = { name: 'lookup', description: 'Look something up', parameterDefinitions: { query: { type: 'str', description: 'what to look up', required: true }, limit: { type: 'int' } } };

/** Cohere's v1 chat (`POST /v1/chat`) through `CohereClient.chat` and `chatStream`, on any chat model. */
describe('cohere chat v1 (/v1/chat)', () => {
  const s = openaiOrg();
  let co: CohereClient;
  before(() => {
    co = new CohereClient({ token: s.o.key, environment: env().gw.url });
  });

  it('answers chat as NonStreamedChatResponse (text, COMPLETE, meta, chat_history to send back) from preamble, history and message, billed once; the raw body is the document’s', async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: s.o.org.id } });
    const r = await co.chat({
      model: 'sim-chat',
      preamble: 'be brief',
      chatHistory: [
        { role: 'USER', message: 'my name is Ada' },
        { role: 'CHATBOT', message: 'hello Ada' },
      ],
      message: 'hello cohere v1 friends',
      maxTokens: 200,
      temperature: 0.3,
      p: 0.9,
    });
    expect(r.text).to.include('hello cohere v1 friends');
    expect(r.finishReason).to.equal('COMPLETE');
    expect(r.generationId).to.match(/^[0-9a-f-]{36}$/);
    expect(r.meta!.billedUnits!.outputTokens).to.be.above(0);
    expect(r.chatHistory!.map((m) => m.role)).to.deep.equal(['USER', 'CHATBOT', 'USER', 'CHATBOT']);
    expect((r.chatHistory!.at(-1) as Cohere.Message.Chatbot).message).to.equal(r.text);
    expect(sentBody()).to.deep.include({
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'my name is Ada' },
        { role: 'assistant', content: 'hello Ada' },
        { role: 'user', content: 'hello cohere v1 friends' },
      ],
      max_completion_tokens: 200,
      temperature: 0.3,
      top_p: 0.9,
    });
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: s.o.org.id } }), 'billed once').to.equal(before + 1);

    const raw = await call('POST', '/v1/chat', { headers: keyHeader(s.o.key), json: { model: 'sim-chat', message: 'raw v1', documents: [{ id: 'memo', text: 'Lunch is at noon.' }] } });
    expect(raw.status, raw.text).to.equal(200);
    expectCohereV1ChatResponse(raw.body);
    expect(JSON.stringify(sentBody()), 'documents reach the model').to.include('[memo] {').and.to.include('Lunch is at noon.');
  });

  it('streams with chatStream (newline-delimited JSON): stream-start, text-generation…, stream-end with the response; as server-sent events when asked; each event the document’s', async () => {
    const types: string[] = [];
    let text = '';
    let end: Cohere.StreamedChatResponse.StreamEnd | undefined;
    for await (const ev of await co.chatStream({ model: 'sim-chat', message: 'stream to a v1 client' })) {
      types.push(ev.eventType);
      if (ev.eventType === 'text-generation') text += ev.text;
      if (ev.eventType === 'stream-end') end = ev;
    }
    expect(types[0]).to.equal('stream-start');
    expect(types[1]).to.equal('text-generation');
    expect(types.at(-1)).to.equal('stream-end');
    expect(text).to.include('stream to a v1 client');
    expect(end!.finishReason).to.equal('COMPLETE');
    expect(end!.response.text).to.equal(text);
    expect(end!.response.meta!.tokens!.outputTokens).to.be.above(0);

    const lines = await fetch(`${env().gw.url}/v1/chat`, { method: 'POST', headers: { ...keyHeader(s.o.key), 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-chat', stream: true, message: 'raw lines' }) });
    expect(lines.headers.get('content-type')).to.match(/^application\/stream\+json/);
    const events = (await lines.text()).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { event_type: string; is_finished: boolean });
    for (const e of events) expectCohereV1ChatEvent(e);
    expect(events.map((e) => e.is_finished)).to.deep.equal([...events.slice(1).map(() => false), true]);

    const sse = await fetch(`${env().gw.url}/v1/chat`, { method: 'POST', headers: { ...keyHeader(s.o.key), 'content-type': 'application/json', accepts: 'text/event-stream' }, body: JSON.stringify({ model: 'sim-chat', stream: true, message: 'raw events' }) });
    expect(sse.headers.get('content-type')).to.match(/^text\/event-stream/);
    const framed = parseSse(await sse.text());
    expect(framed.map((e) => e.data.event_type)).to.include.members(['stream-start', 'stream-end']);
    for (const e of framed) expectCohereV1ChatEvent(e.data);
  });

  it('calls tools from parameter_definitions (JSON and streamed) and continues from tool_results, each result after its call', async () => {
    const r = await co.chat({ model: 'sim-chat', message: 'use the tool please', tools: [lookup] });
    const tools = sentBody().tools!;
    expect(tools[0].function).to.deep.include({ name: 'lookup', parameters: { type: 'object', properties: { query: { type: 'string', description: 'what to look up' }, limit: { type: 'integer' } }, required: ['query'] } });
    expect(r.toolCalls, 'the call, with its parameters as an object').to.have.length(1);
    const [tc] = r.toolCalls!;
    expect(tc.name).to.equal('lookup');
    expect(tc.parameters).to.be.an('object');

    const streamed: Cohere.StreamedChatResponse[] = [];
    for await (const ev of await co.chatStream({ model: 'sim-chat', message: 'use the tool please', tools: [lookup] })) streamed.push(ev);
    const generated = streamed.find((e) => e.eventType === 'tool-calls-generation') as Cohere.StreamedChatResponse.ToolCallsGeneration;
    expect(generated.toolCalls.map((c) => c.name)).to.deep.equal(['lookup']);
    expect(streamed.some((e) => e.eventType === 'tool-calls-chunk')).to.equal(true);
    const raw = await fetch(`${env().gw.url}/v1/chat`, { method: 'POST', headers: { ...keyHeader(s.o.key), 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-chat', stream: true, message: 'use the tool please', tools: [{ name: 'lookup', description: 'Look something up', parameter_definitions: { query: { type: 'str', required: true } } }] }) });
    for (const line of (await raw.text()).split('\n').filter(Boolean)) expectCohereV1ChatEvent(JSON.parse(line));

    // the next request: the response's chat_history sent back, and the results of its calls
    const next = await co.chat({ model: 'sim-chat', message: '', tools: [lookup], chatHistory: r.chatHistory, toolResults: [{ call: tc, outputs: [{ answer: 'forty-two' }] }] });
    expect(next.finishReason).to.equal('COMPLETE');
    const sent = sentBody().messages;
    expect(sent.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool']);
    expect(sent[1]).to.deep.include({ tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'lookup', arguments: JSON.stringify(tc.parameters) } }] });
    expect(sent[2]).to.deep.equal({ role: 'tool', tool_call_id: 'call_0', content: '[{"answer":"forty-two"}]' });

    // results of a call no turn of the history made get a turn of their own; a call without a result is left out
    await co.chat({
      model: 'sim-chat',
      message: 'and now?',
      chatHistory: [
        { role: 'USER', message: 'first' },
        { role: 'CHATBOT', message: '', toolCalls: [{ name: 'lookup', parameters: { query: 'never answered' } }] },
        { role: 'USER', message: 'second' },
        { role: 'TOOL', toolResults: [{ call: { name: 'lookup', parameters: { query: 'orphan' } }, outputs: [{ found: true }] }] },
      ],
    });
    const shaped = sentBody().messages;
    expect(shaped.map((m) => m.role), 'the unanswered call’s empty turn is dropped').to.deep.equal(['user', 'user', 'assistant', 'tool', 'user']);
    expect((shaped[2].tool_calls as Array<{ id: string }>)[0].id).to.equal(shaped[3].tool_call_id);
  });

  it('refuses a bad request as 400 before anything is sent or billed: no message, no model, connectors, conversation_id, search_queries_only, raw_prompting, bad types; unknown model 404', async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: s.o.org.id } });
    const sentBefore = env().sim.log.entries.length;
    const cases: Array<[Record<string, unknown>, number, string | undefined]> = [
      [{ model: 'sim-chat' }, 400, 'message'],
      [{ message: 'no model' }, 400, 'model'],
      [{ model: 'sim-chat', message: '' }, 400, 'message'],
      [{ model: 'sim-chat', message: 'x', connectors: [{ id: 'web-search' }] }, 400, 'connectors'],
      [{ model: 'sim-chat', message: 'x', conversation_id: 'abc' }, 400, 'conversation_id'],
      [{ model: 'sim-chat', message: 'x', search_queries_only: true }, 400, 'search_queries_only'],
      [{ model: 'sim-chat', message: 'x', raw_prompting: true }, 400, 'raw_prompting'],
      [{ model: 'sim-chat', message: 'x', chat_history: [{ role: 'WIZARD', message: 'x' }] }, 400, undefined],
      [{ model: 'sim-chat', message: 'x', p: 1.5 }, 400, 'p'],
      [{ model: 'no-such-model', message: 'x' }, 404, undefined],
    ];
    for (const [json, status, param] of cases) {
      const r = await call('POST', '/v1/chat', { headers: keyHeader(s.o.key), json });
      expect(r.status, `${JSON.stringify(json)}: ${r.text}`).to.equal(status);
      if (param) expect(r.body.error.message, `${JSON.stringify(json)}: ${r.text}`).to.include(`'${param}'`);
      expect(r.text).not.to.match(/\bat .+\.js:\d+/);
    }
    expect(env().sim.log.entries.length, 'nothing sent').to.equal(sentBefore);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: s.o.org.id } }), 'nothing billed').to.equal(before);
  });
  it("refuses what Cohere's v1 chat refuses: a history turn without a message, an empty message without tool_results, the ignored fields' values outside Cohere's enums; 400 naming the field, nothing sent or billed", async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: s.o.org.id } });
    const sentBefore = env().sim.log.entries.length;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ message: 'x', chat_history: [{ role: 'USER' }] }, 'chat_history[0].message'],
      [{ message: 'x', chat_history: [{ role: 'USER', message: 'a' }, { role: 'SYSTEM', message: '' }] }, 'chat_history[1].message'],
      [{ message: 'x', chat_history: [{ role: 'CHATBOT', message: '' }] }, 'chat_history[0].message'],
      [{ message: 'x', chat_history: [{ role: 'CHATBOT', tool_calls: [] }] }, 'chat_history[0].message'],
      [{ message: '', chat_history: [{ role: 'USER', message: 'answer this history' }] }, 'message'],
      [{ message: 'x', prompt_truncation: 'NEVER' }, 'prompt_truncation'],
      [{ message: 'x', citation_quality: 'accurate' }, 'citation_quality'],
      [{ message: 'x', safety_mode: 'OFF' }, 'safety_mode'], // v2's value; v1 has NONE
      [{ message: 'x', force_single_step: 'yes' }, 'force_single_step'],
      [{ message: 'x', max_input_tokens: 1.5 }, 'max_input_tokens'],
      [{ message: 'x', seed: -1 }, 'seed'],
      // Cohere's document: temperature from 0 to 1
      [{ message: 'x', temperature: 1.5 }, 'temperature'],
      [{ message: 'x', temperature: -0.1 }, 'temperature'],
    ];
    for (const [extra, field] of cases) {
      const r = await call('POST', '/v1/chat', { headers: keyHeader(s.o.key), json: Object.assign({ model: 'sim-chat' }, extra) });
      expect(r.status, `${JSON.stringify(extra)}: ${r.text}`).to.equal(400);
      expect(r.body.error.message, JSON.stringify(extra)).to.include(`'${field}'`);
    }
    expect(env().sim.log.entries.length, 'nothing sent').to.equal(sentBefore);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: s.o.org.id } }), 'nothing billed').to.equal(before);
    // Cohere's values are taken; a CHATBOT turn that only made tool calls may have an empty message
    const ok = await co.chat({
      model: 'sim-chat',
      message: 'x',
      chatHistory: [{ role: 'SYSTEM', message: 's' }, { role: 'USER', message: 'u' }, { role: 'CHATBOT', message: '', toolCalls: [{ name: 'lookup', parameters: {} }] }],
      promptTruncation: 'AUTO_PRESERVE_ORDER',
      citationQuality: 'OFF',
      safetyMode: 'NONE',
      forceSingleStep: true,
      maxInputTokens: 1000,
      seed: 0,
      temperature: 1,
    });
    expect(ok.finishReason).to.equal('COMPLETE');
  });
});
