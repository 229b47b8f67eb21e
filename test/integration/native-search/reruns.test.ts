import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { withSettings } from '../../helpers/settings';
import { startSearchUpstream, useSearchProvider, type SearchUpstream } from '../../helpers/search-upstream';
import { SearchUsage } from '../../../shared/db/models';

type Block = Record<string, unknown> & { type: string };
const SEARCH = { type: 'web_search_20250305', name: 'web_search' } as const;
const ledger = (orgId: string) => SearchUsage.count({ where: { orgId } });

/** The tool results the upstream model was given, over every upstream request of the test. */
function toolTexts(): string[] {
  return env()
    .sim.log.entries.filter((e) => e.path === '/v1/chat/completions')
    .flatMap((e) => ((e.body as { messages: Array<{ role: string; content: string }> }).messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content)));
}

/**
 * Earlier results a follow-up does not echo (or echoes with another organization's seal) are
 * searched again on the rails: those re-runs take from the request's budget (each tool's max_uses and
 * NATIVE_MAX_SEARCHES) and are billed to the organization that sends the request.
 */
describe('native search: re-runs of earlier results', () => {
  let up: SearchUpstream;
  let a: TestOrg;
  let b: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    up = await startSearchUpstream();
    a = await buildOrg(env().redis);
    b = await buildOrg(env().redis);
    await useSearchProvider(a.org.id, up, 'n27-reruns');
    await useSearchProvider(b.org.id, up, 'n27-reruns');
  });
  after(() => up.close());

  const anthropic = (o: TestOrg) => new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
  const openai = (o: TestOrg) => new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });

  /** An assistant turn with `n` earlier searches whose results come back without encrypted_content. */
  function unechoed(n: number): Block[] {
    return Array.from({ length: n }, (_, i) => [
      { type: 'server_tool_use', id: `srvtoolu_old${i}`, name: 'web_search', input: { query: `old ${i}` } },
      { type: 'web_search_tool_result', tool_use_id: `srvtoolu_old${i}`, content: [{ type: 'web_search_result', url: `https://docs.example.org/old-${i}/1`, title: 'T', encrypted_content: '', page_age: null }] },
    ]).flat();
  }

  const followUp = (o: TestOrg, tool: Record<string, unknown>, assistant: unknown[], ask = 'thanks, now summarise it', stream = false) => {
    const params = { model: 'sim-chat', max_tokens: 300, tools: [tool as never], messages: [{ role: 'user' as const, content: 'search for honey bees' }, { role: 'assistant' as const, content: assistant as never }, { role: 'user' as const, content: ask }] };
    return stream ? anthropic(o).messages.stream(params).finalMessage() : anthropic(o).messages.create(params);
  };

  it('messages: max_uses caps re-runs; the ones past it run nothing and the model is told max_uses_exceeded', async () => {
    const rows = await ledger(a.org.id);
    const queries = up.queries.length;
    const m = await followUp(a, { ...SEARCH, max_uses: 1 }, unechoed(6));
    expect(up.queries.slice(queries), 'one re-run').to.deep.equal(['old 0']);
    expect(await ledger(a.org.id)).to.equal(rows + 1);
    expect(m.usage.server_tool_use?.web_search_requests).to.equal(1);
    const told = toolTexts();
    expect(told).to.have.length(6);
    expect(told[0]).to.include('Web results for "old 0"');
    for (const t of told.slice(1)) expect(t).to.match(/^Error: max_uses_exceeded: The web_search tool may be used 1 times per request/);
  });

  it('messages: NATIVE_MAX_SEARCHES caps re-runs, and what they used is gone for the model’s own searches', async () => {
    await withSettings({ NATIVE_MAX_SEARCHES: '3' }, async () => {
      const rows = await ledger(a.org.id);
      const queries = up.queries.length;
      const m = await followUp(a, SEARCH, unechoed(5));
      expect(up.queries.slice(queries)).to.deep.equal(['old 0', 'old 1', 'old 2']);
      expect(await ledger(a.org.id)).to.equal(rows + 3);
      expect(m.usage.server_tool_use?.web_search_requests).to.equal(3);
      for (const t of toolTexts().slice(3)) expect(t).to.match(/^Error: max_uses_exceeded: At most 3 searches and fetches per request/);
    });
    // max_uses 2, two re-runs: the model's new search in the same request is refused in-band (streamed too).
    for (const stream of [false, true]) {
      const rows = await ledger(a.org.id);
      const queries = up.queries.length;
      const m = await followUp(a, { ...SEARCH, max_uses: 2 }, unechoed(2), 'search for wasps', stream);
      expect(up.queries.slice(queries), `stream ${stream}`).to.deep.equal(['old 0', 'old 1']);
      expect(await ledger(a.org.id)).to.equal(rows + 2);
      const content = m.content as unknown as Block[];
      expect(content.map((x) => x.type)).to.deep.equal(['server_tool_use', 'web_search_tool_result', 'text']);
      expect(content[0]).to.deep.include({ input: { query: 'wasps' } });
      expect(content[1].content).to.deep.equal({ type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded', code: 'max_uses_exceeded' });
      expect(m.usage.server_tool_use?.web_search_requests).to.equal(2);
    }
  });

  it("messages: another organization's encrypted_content is not echoed: re-run and billed to the organization replaying it", async () => {
    const fromA = await anthropic(a).messages.create({ model: 'sim-chat', max_tokens: 300, tools: [SEARCH], messages: [{ role: 'user', content: 'search for honey bees' }] });
    const fromB = await anthropic(b).messages.stream({ model: 'sim-chat', max_tokens: 300, tools: [SEARCH], messages: [{ role: 'user', content: 'search for honey bees' }] }).finalMessage();
    const [rowsA, rowsB] = [await ledger(a.org.id), await ledger(b.org.id)];
    const queries = up.queries.length;

    const replayed = await followUp(b, SEARCH, fromA.content);
    expect(up.queries.slice(queries), 'searched again').to.deep.equal(['honey bees']);
    expect(replayed.usage.server_tool_use?.web_search_requests).to.equal(1);
    expect(await ledger(b.org.id), 'billed to the replaying organization').to.equal(rowsB + 1);
    expect(await ledger(a.org.id)).to.equal(rowsA);

    const own = await followUp(b, SEARCH, fromB.content); // its own (streamed) seal still opens
    expect(own.usage.server_tool_use?.web_search_requests ?? 0).to.equal(0);
    expect(up.queries.length).to.equal(queries + 1);
    expect(await ledger(b.org.id)).to.equal(rowsB + 1);
  });

  it("responses: another organization's web_search_call is re-run and billed; NATIVE_MAX_SEARCHES caps re-runs", async () => {
    const first = await openai(a).responses.create({ model: 'sim-chat', input: 'search for honey bees', tools: [{ type: 'web_search' }] });
    const ws = first.output[0] as unknown as Record<string, unknown>;
    expect(ws.encrypted_content).to.be.a('string');
    const echo = (o: TestOrg, items: Array<Record<string, unknown>>) =>
      openai(o).responses.create({ model: 'sim-chat', tools: [{ type: 'web_search' }], store: false, input: [{ role: 'user', content: 'search for honey bees' }, ...(items as never[]), { role: 'user', content: 'thanks, summarise it' }] });
    const [rowsA, rowsB] = [await ledger(a.org.id), await ledger(b.org.id)];
    const queries = up.queries.length;

    await echo(a, [ws]);
    expect(up.queries.length, 'its own organization: reused').to.equal(queries);
    await echo(b, [ws]);
    expect(up.queries.slice(queries), 'another organization: searched again').to.deep.equal(['honey bees']);
    expect(await ledger(b.org.id)).to.equal(rowsB + 1);
    expect(await ledger(a.org.id)).to.equal(rowsA);

    await withSettings({ NATIVE_MAX_SEARCHES: '2' }, async () => {
      const bare = [1, 2, 3, 4].map((i) => ({ type: 'web_search_call', id: `ws_old${i}`, status: 'completed', action: { type: 'search', query: `old ${i}` } }));
      await echo(b, bare);
      expect(up.queries.slice(queries + 1)).to.deep.equal(['old 1', 'old 2']);
      expect(await ledger(b.org.id)).to.equal(rowsB + 3);
      for (const t of toolTexts().slice(-2)) expect(t).to.match(/^Error: max_uses_exceeded: At most 2 searches and fetches per request/);
    });
  });
});
