import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { sdkFinalResponse } from '../../helpers/sdk-streams';
import { ended } from '../../helpers/responses-background';
import { expectOpenAI, expectResponsesEvent, responsesEventForDocument, withoutNullUser } from '../../helpers/conformance';
import { startSearchUpstream, useSearchProvider, type SearchUpstream } from '../../helpers/search-upstream';
import { ScriptedUpstream, chunk, completion, usageChunk, type Reply } from '../../helpers/scripted-upstream';

type Item = { type: string; id: string } & Record<string, unknown>;

const THOUGHT = 'The user greets me, so I greet them back.';
/** sim-chat's upstream gives every turn this reasoning_content (word by word when streamed). */
const reasoningKnobs = () => env().sim.knobs.set('sim-chat-1', { reasoning: { field: 'reasoning_content', text: THOUGHT } });
/** Each turn's reasoning, then what the turn did: the search turn's call, the answer turn's message. */
const SEARCHED = ['reasoning', 'web_search_call', 'reasoning', 'message'];

function expectReasoningItems(output: Item[]): void {
  const items = output.filter((i) => i.type === 'reasoning');
  expect(items).to.have.length(2);
  for (const r of items) {
    expect(r.id).to.match(/^rs_/);
    expect(r).to.deep.include({ summary: [], content: [{ type: 'reasoning_text', text: THOUGHT }], status: 'completed' });
  }
  expect(items[0].id).not.to.equal(items[1].id);
}

/**
 * The hosted web search path keeps each model turn's reasoning (chat's `reasoning_content`) as a
 * `reasoning` item in its place: before that turn's web_search_call, before the answer's message;
 * JSON, streamed (the plain path's reasoning events; the SDK's ResponseStream assembles them),
 * stored, in the background; echoed back as input it is accepted and not sent upstream.
 */
describe('native web search on /v1/responses: reasoning items', function () {
  this.timeout(30_000);
  let up: SearchUpstream;
  let o: TestOrg;
  let client: OpenAI;
  const search = { model: 'sim-chat', input: 'search for honey bees', tools: [{ type: 'web_search' as const }] };
  beforeEach(() => {
    resetSim();
    reasoningKnobs();
  });
  afterEach(() => env().sim.knobs.reset());
  before(async () => {
    [up, o] = await Promise.all([startSearchUpstream(), buildOrg(env().redis)]);
    await useSearchProvider(o.org.id, up, 'reasoning-search');
    client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  after(() => up.close());

  it('JSON: a reasoning item before each turn’s search call and message; stored; echoed back or followed up, no reasoning goes upstream', async () => {
    const r = await client.responses.create(search);
    expect(r.output.map((i) => i.type)).to.deep.equal(SEARCHED);
    expectReasoningItems(r.output as unknown as Item[]);
    expect(r.output_text).to.include('https://docs.example.org/honey-bees/1').and.not.include('greet');
    expectOpenAI('Response', withoutNullUser(r));
    expect((await client.responses.retrieve(r.id)).output).to.deep.equal(r.output);

    env().sim.knobs.reset();
    resetSim();
    const queries = up.queries.length;
    const echoed = await client.responses.create({
      ...search,
      input: [{ role: 'user', content: 'search for honey bees' }, ...(r.output as OpenAI.Responses.ResponseInputItem[]), { role: 'user', content: 'thanks, summarise it' }],
    });
    expect(echoed.status).to.equal('completed');
    expect(echoed.output.map((i) => i.type)).to.deep.equal(['message']);
    const next = await client.responses.create({ ...search, input: 'thanks, summarise it', previous_response_id: r.id });
    expect(next.status).to.equal('completed');
    expect(up.queries.length, 'the echoed results were reused').to.equal(queries);
    const sent = env().sim.log.entries.map((e) => JSON.stringify(e.body));
    expect(sent).to.have.length(2);
    for (const body of sent) expect(body).not.to.include('greet').and.not.include('reasoning');
  });

  it('streamed: each reasoning item’s events as the plain path sends them, in its place; the SDK assembles the same output; stored', async () => {
    const s = await postSse('/v1/responses', keyHeader(o.key), { ...search, stream: true });
    expect(s.status, s.text).to.equal(200);
    const events = s.events.map((e) => e.data);
    for (const e of events) expectResponsesEvent(responsesEventForDocument(e));
    expect(events.map((e) => e.sequence_number)).to.deep.equal(events.map((_, i) => i));
    const final = events.at(-1).response;
    expect(final.output.map((i: Item) => i.type)).to.deep.equal(SEARCHED);
    expectReasoningItems(final.output);
    // per reasoning item (output 0 and 2): added, its part, one delta per upstream piece, done events
    for (const index of [0, 2]) {
      const id = final.output[index].id;
      const own = events.filter((e) => e.output_index === index);
      const deltas = own.filter((e) => e.type === 'response.reasoning_text.delta');
      expect(deltas.length).to.be.above(3);
      expect(deltas.map((e) => e.delta).join('')).to.equal(THOUGHT);
      expect(own.map((e) => e.type)).to.deep.equal([
        'response.output_item.added', 'response.content_part.added', ...deltas.map(() => 'response.reasoning_text.delta'),
        'response.reasoning_text.done', 'response.content_part.done', 'response.output_item.done',
      ]);
      expect(own[0].item).to.deep.equal({ type: 'reasoning', id, summary: [], content: [], status: 'in_progress' });
      for (const e of own.slice(1)) expect(e.item_id ?? e.item.id).to.equal(id);
      expect(own.at(-1).item).to.deep.equal(final.output[index]);
    }
    const types = events.map((e) => e.type);
    expect(types.indexOf('response.web_search_call.in_progress')).to.be.above(types.indexOf('response.reasoning_text.done'));
    // (the SDK's assembled output_text carries `parsed`: compare the items before the message)
    expect((await sdkFinalResponse(events)).output.slice(0, 3)).to.deep.equal(final.output.slice(0, 3));
    expect((await client.responses.retrieve(final.id)).output).to.deep.equal(final.output);

    const seen: string[] = [];
    const stream = client.responses.stream(search);
    stream.on('event', (e) => seen.push(e.type));
    const helper = await stream.finalResponse();
    expect(helper.output.map((i) => i.type)).to.deep.equal(SEARCHED);
    expectReasoningItems(helper.output as unknown as Item[]);
    expect(seen.filter((t) => t === 'response.reasoning_text.done')).to.have.length(2);
  });

  it('background: the stored answer has the reasoning items, polled and streamed', async () => {
    const queued = await client.responses.create({ ...search, background: true });
    const done = await ended(client, queued.id);
    expect(done.output.map((i) => i.type)).to.deep.equal(SEARCHED);
    expectReasoningItems(done.output as unknown as Item[]);
    const streamed = await client.responses.stream({ ...search, background: true }).finalResponse();
    expect(streamed.output.map((i) => i.type)).to.deep.equal(SEARCHED);
    expect((await ended(client, streamed.id)).output.slice(0, 3)).to.deep.equal(streamed.output.slice(0, 3));
  });
});

/** Two turns of a scripted upstream, each with its own reasoning: a search, then the cited answer. */
describe('native web search on /v1/responses: each turn’s own reasoning', function () {
  this.timeout(30_000);
  const ANSWER = 'According to https://docs.example.org/honey-bees/1 bees make honey.';
  const call = { id: 'call_1', type: 'function', function: { name: 'web_search', arguments: '{"query":"honey bees"}' } };
  let search: SearchUpstream;
  let client: OpenAI;
  const ups: ScriptedUpstream[] = [];
  before(async () => {
    const o = await buildOrg(env().redis);
    search = await startSearchUpstream();
    await useSearchProvider(o.org.id, search, 'reasoning-turns');
    client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await search.close();
    for (const up of ups) await up.close();
  });
  const upstream = async (kind: 'openai' | 'anthropic') => {
    const up = await ScriptedUpstream.start(kind);
    ups.push(up);
    return { up, model: await up.model() };
  };
  const expectTurns = (output: unknown[]) => {
    const items = output as Item[];
    expect(items.map((i) => i.type)).to.deep.equal(SEARCHED);
    expect(items[0].content).to.deep.equal([{ type: 'reasoning_text', text: 'First I search.' }]);
    expect(items[2].content).to.deep.equal([{ type: 'reasoning_text', text: 'Now I answer.' }]);
  };

  it('an OpenAI-compatible upstream’s reasoning_content per turn, JSON and streamed', async () => {
    const { up, model } = await upstream('openai');
    up.next = [
      { kind: 'json', body: completion({ content: null, reasoning_content: 'First I search.', tool_calls: [call] }, 'tool_calls') },
      { kind: 'json', body: completion({ content: ANSWER, reasoning_content: 'Now I answer.' }, 'stop') },
    ];
    const r = await client.responses.create({ model, input: 'bees?', tools: [{ type: 'web_search' }] });
    expectTurns(r.output);
    expect(r.output_text).to.equal(ANSWER);

    const streamed = (reasoning: string[], rest: unknown[]): Reply => ({ kind: 'sse', events: [chunk({ role: 'assistant', content: '' }), ...reasoning.map((w) => chunk({ reasoning_content: w })), ...rest, usageChunk()] });
    up.next = [
      streamed(['First ', 'I search.'], [chunk({ tool_calls: [{ index: 0, ...call }] }), chunk({}, 'tool_calls')]),
      streamed(['Now ', 'I answer.'], [chunk({ content: ANSWER }), chunk({}, 'stop')]),
    ];
    const s = await client.responses.stream({ model, input: 'bees?', tools: [{ type: 'web_search' }] }).finalResponse();
    expectTurns(s.output);
    expect(s.output_text).to.equal(ANSWER);
  });

  it('an Anthropic upstream’s thinking block per turn', async () => {
    const { up, model } = await upstream('anthropic');
    const message = (content: unknown[], stop_reason: string) => ({ id: 'msg_1', type: 'message', role: 'assistant', model: 'up', content, stop_reason, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 9 } });
    up.next = [
      { kind: 'json', body: message([{ type: 'thinking', thinking: 'First I search.', signature: 'sig' }, { type: 'tool_use', id: 'toolu_1', name: 'web_search', input: { query: 'honey bees' } }], 'tool_use') },
      { kind: 'json', body: message([{ type: 'thinking', thinking: 'Now I answer.', signature: 'sig' }, { type: 'text', text: ANSWER }], 'end_turn') },
    ];
    const r = await client.responses.create({ model, input: 'bees?', tools: [{ type: 'web_search' }], reasoning: { effort: 'high' } });
    expectTurns(r.output);
    expect(r.output_text).to.equal(ANSWER);
  });
});
