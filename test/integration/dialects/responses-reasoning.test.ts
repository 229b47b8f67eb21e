import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { expectOpenAI, expectResponsesEvent, responsesEventForDocument, withoutNullUser } from '../../helpers/conformance';
import { ended } from '../../helpers/responses-background';
import { ScriptedUpstream } from '../../helpers/scripted-upstream';

type Reasoning = OpenAI.Responses.ResponseReasoningItem;
type Message = OpenAI.Responses.ResponseOutputMessage;

const THOUGHT = 'The user greets me, so I greet them back.';
/** sim-chat's upstream answers with reasoning_content (word by word when streamed) and counts 6 reasoning tokens. */
const reasoningKnobs = () => env().sim.knobs.set('sim-chat-1', { reasoning: { field: 'reasoning_content', text: THOUGHT }, usageExtra: { completion_tokens_details: { reasoning_tokens: 6 } } });

function expectReasoningItem(item: unknown, text: string): void {
  const r = item as Reasoning;
  expect(r.type).to.equal('reasoning');
  expect(r.id).to.match(/^rs_/);
  expect(r).to.deep.include({ summary: [], content: [{ type: 'reasoning_text', text }], status: 'completed' });
}

/**
 * An upstream's raw reasoning (chat's `reasoning_content`: an OpenAI-compatible reasoning server's, or
 * an Anthropic thinking block) is OpenAI's `reasoning` output item before the message, with one
 * `reasoning_text` part: JSON, streamed (reasoning_text events), stored, background; its tokens are
 * `usage.output_tokens_details.reasoning_tokens`. `output_text` stays the message's text, and a
 * reasoning item sent back as input is accepted and not forwarded.
 */
describe('responses dialect: upstream reasoning as reasoning items', function () {
  this.timeout(30_000);
  let o: TestOrg;
  let client: OpenAI;
  beforeEach(resetSim);
  afterEach(() => env().sim.knobs.reset());
  before(async () => {
    o = await buildOrg(env().redis);
    client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });

  it('JSON: a reasoning item before the message, reasoning_tokens in usage, output_text the message only; stored and retrieved', async () => {
    reasoningKnobs();
    const r = await client.responses.create({ model: 'sim-chat', input: 'hello reasoner' });
    expect(r.status).to.equal('completed');
    expect(r.output.map((i) => i.type)).to.deep.equal(['reasoning', 'message']);
    expectReasoningItem(r.output[0], THOUGHT);
    const text = ((r.output[1] as Message).content[0] as OpenAI.Responses.ResponseOutputText).text;
    expect(r.output_text).to.equal(text);
    expect(r.output_text).not.to.include('greet');
    expect(r.usage!.output_tokens_details.reasoning_tokens).to.equal(6);
    expectOpenAI('Response', withoutNullUser(r));

    const got = await client.responses.retrieve(r.id);
    expect(got.output).to.deep.equal(r.output);
    expect(got.output_text).to.equal(text);
    expect(got.usage!.output_tokens_details.reasoning_tokens).to.equal(6);
  });

  it('a follow-up, and a reasoning item echoed back as input (as Codex sends it), send no reasoning upstream', async () => {
    reasoningKnobs();
    const r = await client.responses.create({ model: 'sim-chat', input: 'first turn' });
    env().sim.knobs.reset();
    resetSim();
    const next = await client.responses.create({ model: 'sim-chat', input: 'second turn', previous_response_id: r.id });
    expect(next.output.map((i) => i.type)).to.deep.equal(['message']);
    const echoed = await client.responses.create({
      model: 'sim-chat',
      input: [{ role: 'user', content: 'first turn' }, ...(r.output as OpenAI.Responses.ResponseInputItem[]), { role: 'user', content: 'third turn' }],
    });
    expect(echoed.status).to.equal('completed');
    const sent = env().sim.log.entries.map((e) => JSON.stringify(e.body));
    expect(sent).to.have.length(2);
    for (const body of sent) {
      expect(body).not.to.include('greet');
      expect(body).not.to.include('reasoning');
    }
    const items = await client.responses.inputItems.list(echoed.id);
    expect(items.data.map((i) => i.type)).to.deep.equal(['message', 'reasoning', 'message', 'message'].reverse());
  });

  it('streamed: the reasoning item with content_part, reasoning_text.delta/.done events, then the message; the SDK helper assembles it; stored', async () => {
    reasoningKnobs();
    const s = await postSse('/v1/responses', keyHeader(o.key), { model: 'sim-chat', input: 'hello streamed reasoner', stream: true });
    expect(s.status, s.text).to.equal(200);
    const events = s.events.map((e) => e.data);
    for (const e of events) expectResponsesEvent(responsesEventForDocument(e));
    expect(events.map((e) => e.sequence_number)).to.deep.equal(events.map((_, i) => i));
    const types = events.map((e) => e.type);
    const deltas = events.filter((e) => e.type === 'response.reasoning_text.delta');
    expect(deltas.length).to.be.above(3);
    expect(deltas.map((e) => e.delta).join('')).to.equal(THOUGHT);
    const firstText = types.indexOf('response.output_text.delta');
    expect(types.slice(0, types.indexOf('response.reasoning_text.delta'))).to.deep.equal(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types.slice(types.lastIndexOf('response.reasoning_text.delta') + 1, firstText)).to.deep.equal([
      'response.reasoning_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    const [added, partAdded] = events.slice(2, 4);
    const rsId = added.item.id;
    expect(added).to.deep.include({ output_index: 0, item: { type: 'reasoning', id: rsId, summary: [], content: [], status: 'in_progress' } });
    expect(partAdded).to.deep.include({ item_id: rsId, output_index: 0, content_index: 0, part: { type: 'reasoning_text', text: '' } });
    for (const d of deltas) expect(d).to.include({ item_id: rsId, output_index: 0, content_index: 0 });
    expect(events.find((e) => e.type === 'response.reasoning_text.done')).to.deep.include({ item_id: rsId, output_index: 0, content_index: 0, text: THOUGHT });
    expect(events.find((e) => e.type === 'response.content_part.done')).to.deep.include({ item_id: rsId, part: { type: 'reasoning_text', text: THOUGHT } });
    const itemDone = events.find((e) => e.type === 'response.output_item.done');
    expect(itemDone.output_index).to.equal(0);
    expectReasoningItem(itemDone.item, THOUGHT);
    expect(itemDone.item.id).to.equal(rsId);
    expect(events.filter((e) => e.type === 'response.output_text.delta').every((e) => e.output_index === 1)).to.equal(true);
    const final = events.at(-1);
    expect(final.type).to.equal('response.completed');
    expect(final.response.output.map((i: { type: string }) => i.type)).to.deep.equal(['reasoning', 'message']);
    expect(final.response.output[0]).to.deep.equal(itemDone.item);
    expect(final.response.usage.output_tokens_details.reasoning_tokens).to.equal(6);
    expect((await client.responses.retrieve(final.response.id)).output).to.deep.equal(final.response.output);

    // the official SDK's ResponseStream accepts the events and assembles the same output
    const seen: string[] = [];
    const stream = client.responses.stream({ model: 'sim-chat', input: 'hello helper reasoner' });
    stream.on('event', (e) => seen.push(e.type));
    const helper = await stream.finalResponse();
    expect(helper.output.map((i) => i.type)).to.deep.equal(['reasoning', 'message']);
    expectReasoningItem(helper.output[0], THOUGHT);
    expect(helper.output_text).to.equal(((helper.output[1] as Message).content[0] as OpenAI.Responses.ResponseOutputText).text);
    expect(helper.output_text).not.to.include('greet');
    expect(seen).to.include.members(['response.reasoning_text.delta', 'response.reasoning_text.done']);
    // (the helper's parsed output_text carries `parsed`: compare the reasoning item)
    const stored = await client.responses.retrieve(helper.id);
    expect(stored.output.map((i) => i.type)).to.deep.equal(['reasoning', 'message']);
    expect(stored.output[0]).to.deep.equal(helper.output[0]);
  });

  it('background: the stored answer carries the reasoning item, polled and streamed', async () => {
    reasoningKnobs();
    const queued = await client.responses.create({ model: 'sim-chat', input: 'hello background reasoner', background: true });
    const done = await ended(client, queued.id);
    expect(done.status).to.equal('completed');
    expect(done.output.map((i) => i.type)).to.deep.equal(['reasoning', 'message']);
    expectReasoningItem(done.output[0], THOUGHT);
    expect(done.usage!.output_tokens_details.reasoning_tokens).to.equal(6);

    const streamed = await client.responses.stream({ model: 'sim-chat', input: 'hello background stream', background: true }).finalResponse();
    expect(streamed.output.map((i) => i.type)).to.deep.equal(['reasoning', 'message']);
    expectReasoningItem(streamed.output[0], THOUGHT);
    const polled = await ended(client, streamed.id);
    expect(polled.output.map((i) => i.type)).to.deep.equal(['reasoning', 'message']);
    expect(polled.output[0]).to.deep.equal(streamed.output[0]);
  });

  it('a conversation keeps the reasoning item among its items; its next response sends no reasoning upstream', async () => {
    reasoningKnobs();
    const conv = await client.conversations.create({});
    const r = await client.responses.create({ model: 'sim-chat', input: 'hello conversation reasoner', conversation: conv.id });
    expect(r.output.map((i) => i.type)).to.deep.equal(['reasoning', 'message']);
    const items = await client.conversations.items.list(conv.id, { order: 'asc' });
    expect(items.data.map((i) => i.type)).to.deep.equal(['message', 'reasoning', 'message']);
    expect(items.data[1]).to.deep.equal(r.output[0]);
    env().sim.knobs.reset();
    resetSim();
    const next = await client.responses.create({ model: 'sim-chat', input: 'and then?', conversation: conv.id });
    expect(next.status).to.equal('completed');
    const sent = env().sim.log.entries[0].body as { messages: Array<{ role: string }> };
    expect(sent.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user']);
    expect(JSON.stringify(sent)).not.to.include('greet');
  });

  it('without reasoning from the upstream there is no reasoning item', async () => {
    const r = await client.responses.create({ model: 'sim-chat', input: 'plain answer' });
    expect(r.output.map((i) => i.type)).to.deep.equal(['message']);
    expect(r.usage!.output_tokens_details.reasoning_tokens).to.equal(0);
  });
});

describe('responses dialect: Anthropic thinking as reasoning items', function () {
  this.timeout(30_000);
  let up: ScriptedUpstream;
  let model: string;
  let client: OpenAI;
  const usage = { input_tokens: 5, output_tokens: 9, output_tokens_details: { thinking_tokens: 7 } };
  const thought = { id: 'msg_t', type: 'message', role: 'assistant', model: 'up', content: [{ type: 'thinking', thinking: 'Let me see.', signature: 'sig' }, { type: 'text', text: 'fine' }], stop_reason: 'end_turn', stop_sequence: null, usage };
  beforeEach(resetSim);
  before(async () => {
    up = await ScriptedUpstream.start('anthropic');
    model = await up.model();
    client = new OpenAI({ apiKey: (await buildOrg(env().redis)).key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  after(() => up.close());

  it('a thinking block is the reasoning item and its thinking tokens reasoning_tokens, JSON and streamed through the SDK', async () => {
    up.next = [{ kind: 'json', body: thought }];
    const r = await client.responses.create({ model, input: 'hi', reasoning: { effort: 'high' } });
    expect(r.output.map((i) => i.type)).to.deep.equal(['reasoning', 'message']);
    expectReasoningItem(r.output[0], 'Let me see.');
    expect(r.output_text).to.equal('fine');
    expect(r.usage!.output_tokens_details.reasoning_tokens).to.equal(7);
    expectOpenAI('Response', withoutNullUser(r));

    up.next = [
      {
        kind: 'sse',
        events: [
          { type: 'message_start', message: { ...thought, content: [], stop_reason: null, usage: { input_tokens: 5, output_tokens: 1 } } },
          { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me ' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'see.' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } },
          { type: 'content_block_stop', index: 0 },
          { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
          { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'fine' } },
          { type: 'content_block_stop', index: 1 },
          { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 9, output_tokens_details: { thinking_tokens: 7 } } },
          { type: 'message_stop' },
        ],
      },
    ];
    const s = await client.responses.stream({ model, input: 'hi', reasoning: { effort: 'high' } }).finalResponse();
    expect(s.output.map((i) => i.type)).to.deep.equal(['reasoning', 'message']);
    expectReasoningItem(s.output[0], 'Let me see.');
    expect(s.output_text).to.equal('fine');
    expect(s.usage!.output_tokens_details.reasoning_tokens).to.equal(7);
  });
});
