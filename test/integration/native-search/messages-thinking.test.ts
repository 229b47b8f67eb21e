import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { startSearchUpstream, useSearchProvider, type SearchUpstream } from '../../helpers/search-upstream';
import { ScriptedUpstream } from '../../helpers/scripted-upstream';
import { REDACTED, signatureOf, thinking, thinkingModel } from '../../helpers/thinking-upstream';

type Block = Record<string, unknown> & { type: string };

const SEARCH = { type: 'web_search_20250305', name: 'web_search' } as const;
const THINKING = { type: 'enabled', budget_tokens: 1024 } as const;
const ANSWER = 'Bees make honey, says https://docs.example.org/honey-bees/1.';
/** The search turn thinks, then calls the search; the answer turn thinks (one block redacted), then answers. */
const TURNS = [
  { think: [thinking('I should search for bees.')], then: [{ type: 'tool_use', id: 'toolu_1', name: 'web_search', input: { query: 'honey bees' } }], stop: 'tool_use' },
  { think: [thinking('The results answer it.'), REDACTED], then: [{ type: 'text', text: ANSWER }], stop: 'end_turn' },
];
const ANSWERED = ['thinking', 'server_tool_use', 'web_search_tool_result', 'thinking', 'redacted_thinking', 'text'];

function expectSigned(content: Block[]): void {
  expect(content.map((b) => b.type)).to.deep.equal(ANSWERED);
  expect(content[0]).to.deep.equal({ type: 'thinking', thinking: 'I should search for bees.', signature: signatureOf('I should search for bees.') });
  expect(content[3]).to.deep.equal({ type: 'thinking', thinking: 'The results answer it.', signature: signatureOf('The results answer it.') });
  expect(content[4]).to.deep.equal(REDACTED);
}

/**
 * The gateway's hosted web search loop on /v1/messages, on a model served by an Anthropic-native
 * upstream, with `thinking` on: the upstream (scripted to refuse, as the real API does, a tool_use
 * turn sent back without its thinking block, or a thinking block whose signature does not match) gets
 * the caller's `thinking` and each turn's signed blocks back on the loop's next turn; the caller's
 * answer carries the real signatures and the redacted block, JSON and streamed, and sending it back
 * on the next request gets them to the upstream unchanged.
 */
describe('native web search on /v1/messages: signed thinking round-trips', function () {
  this.timeout(30_000);
  let search: SearchUpstream;
  let up: ScriptedUpstream;
  let model: string;
  let client: Anthropic;
  before(async () => {
    const o = await buildOrg(env().redis);
    search = await startSearchUpstream();
    await useSearchProvider(o.org.id, search, 'thinking-search');
    up = await ScriptedUpstream.start('anthropic');
    up.otherwise = thinkingModel(TURNS);
    model = await up.model();
    client = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
  });
  after(async () => {
    await search.close();
    await up.close();
  });
  beforeEach(() => up.reset());

  const ask = { max_tokens: 4096, thinking: THINKING, tools: [SEARCH], messages: [{ role: 'user' as const, content: 'What do bees make?' }] };

  /** The loop's second turn sent the first turn's signed block before its tool_use; every turn had `thinking`. */
  function expectLoopSentBack(): void {
    expect(up.received).to.have.length(2);
    for (const r of up.received) expect(r.body.thinking).to.deep.equal(THINKING);
    const turn = up.received[1].body.messages[1];
    expect(turn.role).to.equal('assistant');
    expect(turn.content.map((b: Block) => b.type)).to.deep.equal(['thinking', 'tool_use']);
    expect(turn.content[0]).to.deep.equal(thinking('I should search for bees.'));
  }

  /** The caller's next request with the answer sent back: the upstream gets its blocks unchanged and in order. */
  async function expectEchoReachesUpstream(content: Block[]): Promise<void> {
    up.reset();
    const next = await client.messages.create({
      ...ask,
      model,
      messages: [...ask.messages, { role: 'assistant', content: content as unknown as Anthropic.ContentBlockParam[] }, { role: 'user', content: 'And wasps?' }],
    });
    expectSigned(next.content as unknown as Block[]);
    const sent = up.received[0].body.messages as Array<{ role: string; content: Block[] }>;
    expect(sent.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(sent[1].content.map((b) => b.type)).to.deep.equal(['thinking', 'tool_use']);
    expect(sent[1].content[0]).to.deep.equal(content[0]);
    expect(sent[3].content).to.deep.equal([content[3], content[4], { type: 'text', text: ANSWER }]);
  }

  it('JSON: the loop sends the signed block back; the answer carries the signatures and the redacted block; echoed, they reach the upstream', async () => {
    const m = await client.messages.create({ ...ask, model });
    expect(m.stop_reason).to.equal('end_turn');
    expectSigned(m.content as unknown as Block[]);
    expectLoopSentBack();
    await expectEchoReachesUpstream(m.content as unknown as Block[]);
  });

  it('streamed: thinking_delta and signature_delta per signed block, the redacted block whole; the SDK assembles the same blocks', async () => {
    const stream = client.messages.stream({ ...ask, model });
    const deltas: string[] = [];
    stream.on('streamEvent', (e) => {
      if (e.type === 'content_block_delta') deltas.push(`${e.index}:${e.delta.type}`);
    });
    const m = await stream.finalMessage();
    expectSigned(m.content as unknown as Block[]);
    expect(deltas.filter((d) => /^[034]:/.test(d))).to.deep.equal(['0:thinking_delta', '0:signature_delta', '3:thinking_delta', '3:signature_delta']);
    expectLoopSentBack();
    await expectEchoReachesUpstream(m.content as unknown as Block[]);
  });

  it('a modified thinking block sent back is the upstream’s 400, passed on as such', async () => {
    const m = await client.messages.create({ ...ask, model });
    const content = m.content.map((b) => (b.type === 'thinking' ? { ...b, thinking: `${b.thinking} (edited)` } : b));
    const err = await client.messages
      .create({ ...ask, model, messages: [...ask.messages, { role: 'assistant', content: content as Anthropic.ContentBlockParam[] }, { role: 'user', content: 'And wasps?' }] })
      .then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(Anthropic.BadRequestError);
  });
});
