import { expect } from 'chai';
import { CohereClientV2, CohereError, type Cohere } from 'cohere-ai';
import { env } from '../../helpers/harness';
import { call, keyHeader } from '../../helpers/http';
import { expectCohere, expectCohereChatEvent } from '../../helpers/conformance';
import { parseSse } from '../../helpers/sse-events';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';
import { lastSent, openaiOrg } from '../../helpers/openai-org';
import { ScriptedUpstream, byStream, chunk, completion, usageChunk } from '../../helpers/scripted-upstream';

const lookup = { name: 'lookup', description: 'Look something up', parameters: { type: 'object', properties: { query: { type: 'string' } } } };

/** Cohere's v2 chat (`POST /v2/chat`) through `CohereClientV2.chat` and `chatStream`, on any chat model. */
describe('cohere chat (/v2/chat)', () => {
  const s = openaiOrg();
  let co: CohereClientV2;
  before(() => {
    co = new CohereClientV2({ token: s.o.key, environment: env().gw.url });
  });

  it('answers chat as ChatResponseV2 (text, COMPLETE, usage) from the canonical request, billed once; the raw body is the document’s', async () => {
    const r = await co.chat({ model: 'sim-chat', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hello cohere friends' }], maxTokens: 200, temperature: 0.3, p: 0.9 });
    expect(r.finishReason).to.equal('COMPLETE');
    expect(r.message.role).to.equal('assistant');
    const text = (r.message.content![0] as { text: string }).text;
    expect(text).to.include('hello cohere friends');
    expect(r.usage!.billedUnits!.outputTokens).to.be.above(0);
    const sent = env().sim.log.entries.at(-1)!.body as Record<string, unknown>;
    expect(sent).to.deep.include({ messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hello cohere friends' }], max_completion_tokens: 200, temperature: 0.3, top_p: 0.9 });
    await usageSettled();
    const rows = await UsageEvent.findAll({ where: { requestId: r.id } });
    expect(rows, 'one usage event under the answer id').to.have.length(1);
    expect(rows[0].outputTokens).to.equal(r.usage!.billedUnits!.outputTokens);

    const raw = await call('POST', '/v2/chat', { headers: keyHeader(s.o.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: [{ type: 'text', text: 'parts too' }] }] } });
    expect(raw.status, raw.text).to.equal(200);
    expectCohere('/v2/chat', 200, raw.body);

    // tool_choice NONE without tools: a direct answer, as Cohere's document has it (only REQUIRED needs tools); nothing of tools sent
    const none = await co.chat({ model: 'sim-chat', messages: [{ role: 'user', content: 'no tools here' }], toolChoice: 'NONE' });
    expect(none.finishReason).to.equal('COMPLETE');
    const noneSent = env().sim.log.entries.at(-1)!.body as Record<string, unknown>;
    expect([noneSent.tools, noneSent.tool_choice]).to.deep.equal([undefined, undefined]);
  });

  it('streams with chatStream: message-start, content-start, content-delta…, content-end, message-end (finish reason, usage), each event the document’s', async () => {
    const types: string[] = [];
    let text = '';
    let end: Cohere.ChatMessageEndEvent | undefined;
    for await (const ev of await co.chatStream({ model: 'sim-chat', messages: [{ role: 'user', content: 'stream to a cohere client' }] })) {
      types.push(ev.type);
      if (ev.type === 'content-delta') text += ev.delta?.message?.content?.text ?? '';
      if (ev.type === 'message-end') end = ev;
    }
    expect(types[0]).to.equal('message-start');
    expect(types.slice(1, 3)).to.deep.equal(['content-start', 'content-delta']);
    expect(types.slice(-2)).to.deep.equal(['content-end', 'message-end']);
    expect(text).to.include('stream to a cohere client');
    expect(end!.delta!.finishReason).to.equal('COMPLETE');
    expect(end!.delta!.usage!.tokens!.outputTokens).to.be.above(0);

    const res = await fetch(`${env().gw.url}/v2/chat`, { method: 'POST', headers: { ...keyHeader(s.o.key), 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-chat', stream: true, messages: [{ role: 'user', content: 'raw events' }] }) });
    const events = parseSse(await res.text());
    for (const e of events) {
      expect(e.event).to.equal(e.data.type);
      expectCohereChatEvent(e.data);
    }
  });

  it('calls tools (TOOL_CALL, JSON and streamed) and continues from the tool’s result; documents reach the model', async () => {
    const tools: Cohere.ToolV2[] = [{ type: 'function', function: lookup }];
    const r = await co.chat({ model: 'sim-chat', messages: [{ role: 'user', content: 'use the tool please' }], tools });
    expect(r.finishReason).to.equal('TOOL_CALL');
    const [tc] = r.message.toolCalls!;
    expect(tc).to.deep.include({ type: 'function' });
    expect(tc.function!.name).to.equal('lookup');

    const streamed: string[] = [];
    let args = '';
    for await (const ev of await co.chatStream({ model: 'sim-chat', messages: [{ role: 'user', content: 'use the tool please' }], tools })) {
      streamed.push(ev.type);
      if (ev.type === 'tool-call-delta') args += ev.delta?.message?.toolCalls?.function?.arguments ?? '';
    }
    expect(streamed).to.include.members(['tool-call-start', 'tool-call-end']);
    expect(streamed.at(-1)).to.equal('message-end');
    expect(args).to.equal(tc.function!.arguments);
    const res = await fetch(`${env().gw.url}/v2/chat`, { method: 'POST', headers: { ...keyHeader(s.o.key), 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-chat', stream: true, tools, messages: [{ role: 'user', content: 'use the tool please' }] }) });
    for (const e of parseSse(await res.text())) expectCohereChatEvent(e.data);

    const next = await co.chat({
      model: 'sim-chat',
      tools,
      messages: [
        { role: 'user', content: 'use the tool please' },
        { role: 'assistant', toolCalls: [tc], toolPlan: 'I will look it up.' },
        { role: 'tool', toolCallId: tc.id!, content: [{ type: 'document', document: { data: { answer: 'forty-two' } } }] },
      ],
    });
    expect(next.finishReason).to.equal('COMPLETE');
    const sent = env().sim.log.entries.at(-1)!.body as { messages: Array<Record<string, unknown>> };
    // the plan it sent back with its calls reaches the model as the turn's text (Cohere's tool-use loop sends it back so)
    expect(sent.messages[1]).to.deep.include({ role: 'assistant', content: 'I will look it up.', tool_calls: [{ id: tc.id, type: 'function', function: tc.function }] });
    expect(sent.messages[2]).to.deep.equal({ role: 'tool', tool_call_id: tc.id, content: '{"answer":"forty-two"}' });

    await co.chat({ model: 'sim-chat', messages: [{ role: 'user', content: 'what do the documents say?' }], documents: ['The sky is green on Tuesdays.', { id: 'memo', data: { title: 'memo', text: 'Lunch is at noon.' } }] });
    expect(lastSent()).to.include('[doc_0] The sky is green on Tuesdays.').and.to.include('[memo] {');
  });

  it("puts the text the model writes before its tool calls in message.tool_plan, JSON and streamed (tool-plan-delta events), as Cohere does; an answer without calls keeps its text as content", async () => {
    const up = await ScriptedUpstream.start('openai');
    try {
      const model = await up.model();
      const tools: Cohere.ToolV2[] = [{ type: 'function', function: lookup }];
      const ask = { model, tools, messages: [{ role: 'user' as const, content: 'what do bees make?' }] };
      const found = { id: 'call_1', type: 'function' as const, function: { name: 'lookup', arguments: '{"query":"bees"}' } };
      up.otherwise = byStream(completion({ content: 'I will look up bees.', tool_calls: [found] }, 'tool_calls'), [
        chunk({ role: 'assistant', content: 'I will look' }),
        chunk({ content: ' up bees.' }),
        chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"query":"bees"}' } }] }),
        chunk({}, 'tool_calls'),
        usageChunk(),
      ]);
      const r = await co.chat(ask);
      expect(r.finishReason).to.equal('TOOL_CALL');
      expect(r.message.toolPlan).to.equal('I will look up bees.');
      expect(r.message.content, 'the plan is not content').to.equal(undefined);
      expect(r.message.toolCalls).to.deep.equal([found]);
      const raw = await call('POST', '/v2/chat', { headers: keyHeader(s.o.key), json: { model, tools, messages: ask.messages } });
      expectCohere('/v2/chat', 200, raw.body);
      expect(raw.body.message).to.have.keys('role', 'tool_plan', 'tool_calls');

      const types: string[] = [];
      let plan = '';
      for await (const ev of await co.chatStream(ask)) {
        types.push(ev.type);
        if (ev.type === 'tool-plan-delta') plan += ev.delta?.message?.toolPlan ?? '';
      }
      expect(types).to.deep.equal(['message-start', 'tool-plan-delta', 'tool-plan-delta', 'tool-call-start', 'tool-call-delta', 'tool-call-end', 'message-end']);
      expect(plan).to.equal('I will look up bees.');
      const res = await fetch(`${env().gw.url}/v2/chat`, { method: 'POST', headers: { ...keyHeader(s.o.key), 'content-type': 'application/json' }, body: JSON.stringify({ model, tools, stream: true, messages: ask.messages }) });
      for (const e of parseSse(await res.text())) expectCohereChatEvent(e.data);

      // tools offered but none called: the text is the answer's content, each delta as it came
      up.otherwise = byStream(completion({ content: 'Bees make honey.' }, 'stop'), [chunk({ role: 'assistant', content: 'Bees ' }), chunk({ content: 'make honey.' }), chunk({}, 'stop'), usageChunk()]);
      const answered = await co.chat(ask);
      expect([answered.finishReason, answered.message.toolPlan, answered.message.content]).to.deep.equal(['COMPLETE', undefined, [{ type: 'text', text: 'Bees make honey.' }]]);
      const texts: string[] = [];
      const kinds: string[] = [];
      for await (const ev of await co.chatStream(ask)) {
        kinds.push(ev.type);
        if (ev.type === 'content-delta') texts.push(ev.delta?.message?.content?.text ?? '');
      }
      expect(kinds).to.deep.equal(['message-start', 'content-start', 'content-delta', 'content-delta', 'content-end', 'message-end']);
      expect(texts).to.deep.equal(['Bees ', 'make honey.']);
    } finally {
      await up.close();
    }
  });

  it('refuses a bad request as 400 before anything is sent or billed; an unknown model 404; GET 405', async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: s.o.org.id } });
    const sentBefore = env().sim.log.entries.length;
    const cases: Array<[Record<string, unknown>, number]> = [
      [{ messages: [{ role: 'user', content: 'x' }] }, 400],
      [{ model: 'sim-chat' }, 400],
      [{ model: 'sim-chat', messages: [] }, 400],
      [{ model: 'sim-chat', messages: [{ role: 'wizard', content: 'x' }] }, 400],
      [{ model: 'sim-chat', messages: [{ role: 'tool', content: 'no call id' }] }, 400],
      [{ model: 'sim-chat', messages: [{ role: 'user', content: 'x' }], p: 1.5 }, 400],
      [{ model: 'sim-chat', messages: [{ role: 'user', content: 'x' }], tool_choice: 'REQUIRED' }, 400],
      [{ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }, 404],
    ];
    for (const [json, status] of cases) {
      const r = await call('POST', '/v2/chat', { headers: keyHeader(s.o.key), json });
      expect(r.status, `${JSON.stringify(json)}: ${r.text}`).to.equal(status);
      expect(r.text).not.to.match(/\bat .+\.js:\d+/);
    }
    const sdk = await co.chat({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(sdk).to.be.instanceOf(CohereError);
    expect((sdk as CohereError).statusCode).to.equal(404);
    const get = await call('GET', '/v2/chat', { headers: keyHeader(s.o.key) });
    expect(get.status).to.equal(405);
    expect(env().sim.log.entries.length, 'nothing sent').to.equal(sentBefore);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: s.o.org.id } })).to.equal(before);
  });
  it('types the fields it accepts and ignores as Cohere does (safety_mode, citation_options, logprobs, thinking, priority, seed), and temperature in its range: a value Cohere refuses is 400 naming the field, nothing sent or billed; the values Cohere takes answer', async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: s.o.org.id } });
    const sentBefore = env().sim.log.entries.length;
    const base = { model: 'sim-chat', messages: [{ role: 'user', content: 'x' }] };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ safety_mode: 'NONE' }, 'safety_mode'], // v1's value; v2 has OFF
      [{ safety_mode: 'contextual' }, 'safety_mode'],
      [{ citation_options: { mode: 'SOMETIMES' } }, 'citation_options.mode'],
      [{ citation_options: 'FAST' }, 'citation_options'],
      [{ logprobs: 'yes' }, 'logprobs'],
      [{ thinking: { type: 'on' } }, 'thinking.type'],
      [{ thinking: { token_budget: 100 } }, 'thinking.type'],
      [{ thinking: { type: 'enabled', token_budget: 0 } }, 'thinking.token_budget'],
      [{ priority: 1000 }, 'priority'],
      [{ priority: -1 }, 'priority'],
      [{ priority: 1.5 }, 'priority'],
      [{ seed: -1 }, 'seed'],
      // Cohere's document (ChatRequest v2): temperature from 0 to 1
      [{ temperature: 1.5 }, 'temperature'],
      [{ temperature: -0.1 }, 'temperature'],
    ];
    for (const [extra, field] of cases) {
      const r = await call('POST', '/v2/chat', { headers: keyHeader(s.o.key), json: Object.assign({}, base, extra) });
      expect(r.status, `${JSON.stringify(extra)}: ${r.text}`).to.equal(400);
      expect(r.body.error.code).to.equal('invalid_request');
      expect(r.body.error.message, JSON.stringify(extra)).to.include(`'${field}'`);
    }
    expect(env().sim.log.entries.length, 'nothing sent').to.equal(sentBefore);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: s.o.org.id } }), 'nothing billed').to.equal(before);
    // every value of Cohere's enums and ranges is taken (and changes nothing)
    for (const mode of ['CONTEXTUAL', 'STRICT', 'OFF'] as const) {
      const r = await co.chat({ model: 'sim-chat', messages: [{ role: 'user', content: 'x' }], safetyMode: mode, citationOptions: { mode: 'FAST' }, logprobs: false, thinking: { type: 'enabled', tokenBudget: 1 }, priority: 999, seed: 0, temperature: mode === 'OFF' ? 1 : 0 });
      expect(r.finishReason).to.equal('COMPLETE');
    }
  });
});
