import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { startSearchUpstream, useSearchProvider, type SearchUpstream } from '../../helpers/search-upstream';
import { ScriptedUpstream } from '../../helpers/scripted-upstream';
import { REDACTED, thinking, thinkingModel } from '../../helpers/thinking-upstream';

type Item = Record<string, unknown> & { type: string };
type Sent = { role: string; content: string | Item[] };

const ANSWER = 'Bees make honey, says https://docs.example.org/honey-bees/1.';
const TURNS = [
  { think: [thinking('I should search for bees.')], then: [{ type: 'tool_use', id: 'toolu_1', name: 'web_search', input: { query: 'honey bees' } }], stop: 'tool_use' },
  { think: [thinking('The results answer it.'), REDACTED], then: [{ type: 'text', text: ANSWER }], stop: 'end_turn' },
];
/** A model that thinks unless told not to (what the SDK documents of omitting `thinking`: it depends on the model). */
const thinksByDefault = (b: Record<string, unknown>) => (b.thinking as { type?: unknown } | undefined)?.type !== 'disabled';
const SEARCH = [{ type: 'web_search' as const }];
const INCLUDE: OpenAI.Responses.ResponseIncludable[] = ['reasoning.encrypted_content'];

/** The assistant turns the upstream got, each with its blocks' types. */
const assistantTurns = (r: { body: { messages: Sent[] } }) => r.body.messages.filter((m) => m.role === 'assistant').map((m) => (m.content as Item[]).map((b) => b.type));

/**
 * The hosted web search loop on /v1/responses on an Anthropic-native upstream that thinks: the
 * loop's next turn sends the previous turn's signed thinking back (the scripted upstream refuses
 * without it, as the real API does); each turn's reasoning item carries its signed blocks as
 * `encrypted_content` when `include` asks (`reasoning.encrypted_content`), marked as Anthropic's;
 * sent back as input, or reached through `previous_response_id` (stored whatever `include` said),
 * they go to the upstream as the thinking blocks before that turn's tool_use and text; a
 * conversation keeps them (whatever `include` said) and sends the answer turn's back.
 */
describe('native web search on /v1/responses: signed thinking round-trips', function () {
  this.timeout(30_000);
  let search: SearchUpstream;
  let up: ScriptedUpstream;
  let model: string;
  let client: OpenAI;
  before(async () => {
    const o = await buildOrg(env().redis);
    search = await startSearchUpstream();
    await useSearchProvider(o.org.id, search, 'thinking-responses');
    up = await ScriptedUpstream.start('anthropic');
    up.otherwise = thinkingModel(TURNS, thinksByDefault);
    model = await up.model();
    client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await search.close();
    await up.close();
  });
  beforeEach(() => up.reset());

  function expectEncrypted(output: Item[]): void {
    expect(output.map((i) => i.type)).to.deep.equal(['reasoning', 'web_search_call', 'reasoning', 'message']);
    for (const i of [0, 2]) expect(output[i].encrypted_content).to.be.a('string').and.match(/^anthropic-signed-thinking\.v1\./);
    expect(output[0].content).to.deep.equal([{ type: 'reasoning_text', text: 'I should search for bees.' }]);
  }

  /** The loop sent the search turn back with its signed block first. */
  function expectLoopSentBack(): void {
    expect(up.received).to.have.length(2);
    expect(assistantTurns(up.received[1])).to.deep.equal([['thinking', 'tool_use']]);
    expect((up.received[1].body.messages[1].content as Item[])[0]).to.deep.equal(thinking('I should search for bees.'));
  }

  /** A follow-up's first upstream request: both earlier turns with their signed blocks, unchanged and in order. */
  function expectHistorySent(): void {
    const sent = up.received[0].body.messages as Sent[];
    expect(assistantTurns(up.received[0])).to.deep.equal([['thinking', 'tool_use'], ['thinking', 'redacted_thinking', 'text']]);
    const last = sent.filter((m) => m.role === 'assistant')[1].content as Item[];
    expect(last.slice(0, 2)).to.deep.equal([thinking('The results answer it.'), REDACTED]);
  }

  it('JSON: the loop sends each turn’s signed thinking back; encrypted_content when included; echoed or followed up, it reaches the upstream', async () => {
    const r = await client.responses.create({ model, input: 'What do bees make?', tools: SEARCH, include: INCLUDE });
    expect(r.status).to.equal('completed');
    expect(r.output_text).to.equal(ANSWER);
    expectEncrypted(r.output as unknown as Item[]);
    expectLoopSentBack();

    up.reset();
    // a reasoning item whose encrypted_content is not an Anthropic signature (another provider's) is not sent
    const foreign = [{ role: 'user' as const, content: 'hi' }, { type: 'reasoning' as const, id: 'rs_1', summary: [], encrypted_content: 'gAAAAABo-openai-opaque' }, { role: 'assistant' as const, content: 'Hello.' }];
    const echoed = await client.responses.create({
      model,
      tools: SEARCH,
      input: [...foreign, { role: 'user', content: 'What do bees make?' }, ...(r.output as OpenAI.Responses.ResponseInputItem[]), { role: 'user', content: 'And wasps?' }],
    });
    expect(echoed.status).to.equal('completed');
    expect(assistantTurns(up.received[0])[0]).to.deep.equal(['text']);
    up.received[0].body.messages.splice(0, 2);
    expectHistorySent();

    up.reset();
    const followed = await client.responses.create({ model, tools: SEARCH, input: 'And wasps?', previous_response_id: r.id });
    expect(followed.status).to.equal('completed');
    expectHistorySent();
  });

  it('without include: no encrypted_content, and previous_response_id still sends the stored signed blocks', async () => {
    const r = await client.responses.create({ model, input: 'What do bees make?', tools: SEARCH });
    expect((r.output as unknown as Item[]).filter((i) => i.type === 'reasoning').map((i) => 'encrypted_content' in i)).to.deep.equal([false, false]);
    up.reset();
    await client.responses.create({ model, tools: SEARCH, input: 'And wasps?', previous_response_id: r.id });
    expectHistorySent();
  });

  it('streamed: the reasoning items carry encrypted_content; the loop sent the signed block back', async () => {
    const r = await client.responses.stream({ model, input: 'What do bees make?', tools: SEARCH, include: INCLUDE }).finalResponse();
    expectEncrypted(r.output as unknown as Item[]);
    expectLoopSentBack();
    up.reset();
    await client.responses.create({ model, tools: SEARCH, input: 'And wasps?', previous_response_id: r.id });
    expectHistorySent();
  });

  it('streamed without include: no event carries encrypted_content; the stored Response keeps it, and previous_response_id sends the blocks back', async () => {
    const evs: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const ev of await client.responses.create({ model, input: 'What do bees make?', tools: SEARCH, stream: true })) evs.push(ev);
    const last = evs.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(last.type).to.equal('response.completed');
    expect(evs.filter((e) => e.type === 'response.output_item.done' && e.item.type === 'reasoning')).to.have.length(2);
    expect(JSON.stringify(evs)).not.to.include('anthropic-signed-thinking');
    expectLoopSentBack();
    expectEncrypted((await client.responses.retrieve(last.response.id, { include: INCLUDE })).output as unknown as Item[]);
    up.reset();
    await client.responses.create({ model, tools: SEARCH, input: 'And wasps?', previous_response_id: last.response.id });
    expectHistorySent();
  });

  it('in a conversation, JSON and streamed: the answer turn’s signed blocks go back with its message (the search turn’s go with the search, left out)', async () => {
    for (const stream of [false, true]) {
      const conv = await client.conversations.create({});
      const ask = { model, conversation: conv.id, input: 'What do bees make?', tools: SEARCH };
      const r = stream ? await client.responses.stream(ask).finalResponse() : await client.responses.create(ask);
      expect(r.output_text).to.equal(ANSWER);
      up.reset();
      await client.responses.create({ model, conversation: conv.id, tools: SEARCH, input: 'And wasps?' });
      expect(assistantTurns(up.received[0]), String(stream)).to.deep.equal([['thinking', 'redacted_thinking', 'text']]);
      expect((up.received[0].body.messages[1].content as Item[]).slice(0, 2)).to.deep.equal([thinking('The results answer it.'), REDACTED]);
    }
  });
});
