import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { startSearchUpstream, useSearchProvider, type SearchUpstream } from '../../helpers/search-upstream';
import { SearchProvider, SearchUsage, UsageEvent } from '../../../shared/db/models';
import { setSwitch } from '../../../shared/switches/switches';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { withSettings } from '../../helpers/settings';

type Block = Record<string, unknown> & { type: string };
const V = { 'anthropic-version': '2023-06-01' };
const SEARCH = { type: 'web_search_20250305', name: 'web_search' } as const;
const ledger = (orgId: string) => SearchUsage.count({ where: { orgId } });

/** What the upstream model was sent: tools and tool results, per upstream request. */
function upstreamRequests() {
  return env().sim.log.entries.filter((e) => e.path === '/v1/messages' || e.path === '/v1/chat/completions').map((e) => e.body as Record<string, unknown>);
}

function expectCitedAnswer(content: Block[]) {
  expect(content.map((b) => b.type)).to.deep.equal(['server_tool_use', 'web_search_tool_result', 'text']);
  const [use, result, text] = content;
  expect(use).to.deep.include({ name: 'web_search', input: { query: 'honey bees' } });
  expect(String(use.id)).to.match(/^srvtoolu_/);
  expect(result.tool_use_id).to.equal(use.id);
  const results = result.content as Block[];
  expect(results).to.have.length(2);
  expect(results[0]).to.include({ type: 'web_search_result', url: 'https://docs.example.org/honey-bees/1', title: 'Result 1 about honey bees', page_age: '2026-10-01' });
  expect(results[0].encrypted_content).to.be.a('string').and.not.include('honey');
  expect(text.text).to.include('https://docs.example.org/honey-bees/1');
  const citations = text.citations as Block[];
  expect(citations).to.have.length(1);
  expect(citations[0]).to.include({ type: 'web_search_result_location', url: 'https://docs.example.org/honey-bees/1', title: 'Result 1 about honey bees' });
  expect(citations[0].cited_text).to.include('honey bees explained');
  expect(citations[0].encrypted_index).to.be.a('string');
}

describe('native web search on /v1/messages', () => {
  let up: SearchUpstream;
  let o: TestOrg;
  let client: Anthropic;
  beforeEach(resetSim);
  before(async () => {
    up = await startSearchUpstream();
    o = await buildOrg(env().redis);
    await useSearchProvider(o.org.id, up, 'h16-msg-search');
    client = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
  });
  after(() => up.close());

  for (const model of ['sim-chat', 'sim-claude']) {
    it(`the Anthropic SDK gets server_tool_use, web_search_tool_result and cited text on ${model}, JSON and streamed`, async () => {
      const before = await ledger(o.org.id);
      const m = await client.messages.create({ model, max_tokens: 300, tools: [SEARCH], messages: [{ role: 'user', content: 'Please search for honey bees' }] });
      expect(m.model).to.equal(model);
      expect(m.stop_reason).to.equal('end_turn');
      expectCitedAnswer(m.content as unknown as Block[]);
      expect(m.usage.server_tool_use).to.deep.include({ web_search_requests: 1 });
      expect(m.usage.input_tokens).to.be.greaterThan(0);

      const stream = client.messages.stream({ model, max_tokens: 300, tools: [SEARCH], messages: [{ role: 'user', content: 'Please search for honey bees' }] });
      const events: string[] = [];
      stream.on('streamEvent', (e) => events.push(e.type === 'content_block_delta' ? `delta:${e.delta.type}` : e.type));
      const final = await stream.finalMessage();
      expectCitedAnswer(final.content as unknown as Block[]);
      expect(final.usage.server_tool_use?.web_search_requests).to.equal(1);
      // the SDK hides `ping`; everything else in Anthropic's order
      const block = (...deltas: string[]) => ['content_block_start', ...deltas, 'content_block_stop'];
      const textDeltas = events.filter((e) => e === 'delta:text_delta').length;
      expect(textDeltas, 'the answer streams token by token').to.be.greaterThan(3);
      const text = block(...Array<string>(textDeltas).fill('delta:text_delta'), 'delta:citations_delta');
      expect(events).to.deep.equal(['message_start', ...block('delta:input_json_delta'), ...block(), ...text, 'message_delta', 'message_stop']);

      expect(await ledger(o.org.id)).to.equal(before + 2);
      // the server tool never went upstream as declared: the model was offered a plain function tool
      const sent = upstreamRequests();
      expect(sent).to.have.length(4);
      for (const body of sent) {
        const tools = body.tools as Array<Record<string, unknown>>;
        expect(JSON.stringify(tools)).not.to.include('web_search_20250305');
        expect(tools.map((t) => (t.function as { name?: string } | undefined)?.name ?? t.name)).to.deep.equal(['web_search']);
      }
      expect(JSON.stringify(sent[1])).to.include('https://docs.example.org/honey-bees/1'); // the results reached the model
    });
  }

  it('bills the tokens of every model turn and one ledger row per search', async () => {
    await usageSettled();
    const events = await UsageEvent.count({ where: { orgId: o.org.id } });
    const rows = await ledger(o.org.id);
    const r = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V }, json: { model: 'sim-chat', max_tokens: 300, tools: [SEARCH], messages: [{ role: 'user', content: 'search for honey bees' }] } });
    expect(r.status, r.text).to.equal(200);
    await usageSettled();
    const chat = await UsageEvent.findAll({ where: { orgId: o.org.id, modality: 'chat' }, order: [['createdAt', 'ASC']] });
    const mine = chat.filter((e) => e.requestId === r.headers.get('x-service-request-id') || e.requestId.startsWith(`${r.headers.get('x-service-request-id')}.`));
    expect(mine, 'one chat usage event per model turn').to.have.length(2);
    const [input, output] = [mine.reduce((a, e) => a + e.inputTokens, 0), mine.reduce((a, e) => a + e.outputTokens, 0)];
    expect(r.body.usage).to.include({ input_tokens: input, output_tokens: output });
    expect(await ledger(o.org.id)).to.equal(rows + 1);
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.be.at.least(events + 2);
  });

  it('reuses echoed encrypted_content without a new search; re-runs (billed) when it is not echoed', async () => {
    const tools = [SEARCH];
    const first = await client.messages.create({ model: 'sim-chat', max_tokens: 300, tools, messages: [{ role: 'user', content: 'search for honey bees' }] });
    const rows = await ledger(o.org.id);
    const queries = up.queries.length;
    const follow = (assistant: Anthropic.ContentBlockParam[]) =>
      client.messages.create({ model: 'sim-chat', max_tokens: 300, tools, messages: [{ role: 'user', content: 'search for honey bees' }, { role: 'assistant', content: assistant }, { role: 'user', content: 'thanks, now summarise it' }] });

    resetSimLog();
    const echoed = await follow(first.content as Anthropic.ContentBlockParam[]);
    expect(echoed.content.map((b) => b.type)).to.deep.equal(['text']);
    expect(echoed.usage.server_tool_use?.web_search_requests ?? 0).to.equal(0);
    expect(await ledger(o.org.id), 'no new search').to.equal(rows);
    expect(up.queries.length).to.equal(queries);
    expect(JSON.stringify(upstreamRequests()[0]), 'the model saw the earlier results').to.include('Snippet 1: honey bees explained');

    const stripped = first.content.map((b) => (b.type === 'web_search_tool_result' ? { ...b, content: (b.content as Anthropic.WebSearchResultBlock[]).map((x) => ({ ...x, encrypted_content: '' })) } : b));
    const rerun = await follow(stripped as Anthropic.ContentBlockParam[]);
    expect(rerun.usage.server_tool_use?.web_search_requests).to.equal(1);
    expect(await ledger(o.org.id), 're-run and billed').to.equal(rows + 1);
    expect(up.queries.slice(queries)).to.deep.equal(['honey bees']);

    const forged = first.content.map((b) => (b.type === 'web_search_tool_result' ? { ...b, content: (b.content as Anthropic.WebSearchResultBlock[]).map((x) => ({ ...x, encrypted_content: 'v1.AAAA.BBBB.CCCC' })) } : b));
    await follow(forged as Anthropic.ContentBlockParam[]);
    expect(await ledger(o.org.id), 'a forged seal is not trusted').to.equal(rows + 2);
  });

  const keepSearching = (tool: Record<string, unknown>) =>
    call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V }, json: { model: 'sim-chat', max_tokens: 300, tools: [tool], messages: [{ role: 'user', content: 'search for bees and keep searching' }] } });
  const MAX_USES = { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded', code: 'max_uses_exceeded' };

  it('caps the loop at NATIVE_MAX_TURNS (default 5): max_uses gives in-band max_uses_exceeded, and the last turn answers', async () => {
    const rows = await ledger(o.org.id);
    const r = await keepSearching({ ...SEARCH, max_uses: 2 });
    expect(r.status, r.text).to.equal(200);
    const content = r.body.content as Block[];
    const uses = content.filter((b) => b.type === 'server_tool_use');
    expect(uses, 'every turn but the last searches').to.have.length(4);
    const results = content.filter((b) => b.type === 'web_search_tool_result');
    expect(results.slice(0, 2).every((b) => Array.isArray(b.content))).to.equal(true);
    for (const b of results.slice(2)) expect(b.content).to.deep.equal(MAX_USES);
    expect(content.at(-1)!.type).to.equal('text');
    expect(r.body.stop_reason).to.equal('end_turn');
    expect(r.body.usage.server_tool_use.web_search_requests).to.equal(2);
    expect(await ledger(o.org.id)).to.equal(rows + 2);
    expect(upstreamRequests()).to.have.length(5);
    expect(JSON.stringify(upstreamRequests().at(-1)!.tools ?? null), 'the last turn is offered no server tool').not.to.include('web_search');
  });

  it('NATIVE_MAX_TURNS=2 allows exactly two model turns; max_uses at the boundary still searches', async () => {
    await withSettings({ NATIVE_MAX_TURNS: '2' }, async () => {
      const rows = await ledger(o.org.id);
      const r = await keepSearching({ ...SEARCH, max_uses: 1 });
      expect(r.status, r.text).to.equal(200);
      const content = r.body.content as Block[];
      expect(content.map((b) => b.type)).to.deep.equal(['server_tool_use', 'web_search_tool_result', 'text']);
      expect(Array.isArray(content[1].content), 'the one use max_uses allows runs').to.equal(true);
      expect(upstreamRequests()).to.have.length(2);
      expect(await ledger(o.org.id)).to.equal(rows + 1);
    });
  });

  it('NATIVE_MAX_SEARCHES caps searches per request (at the boundary: the cap-th runs, the next is refused in-band)', async () => {
    await withSettings({ NATIVE_MAX_SEARCHES: '2' }, async () => {
      const rows = await ledger(o.org.id);
      const r = await keepSearching(SEARCH);
      expect(r.status, r.text).to.equal(200);
      const results = (r.body.content as Block[]).filter((b) => b.type === 'web_search_tool_result');
      expect(results).to.have.length(4);
      expect(results.slice(0, 2).every((b) => Array.isArray(b.content))).to.equal(true);
      for (const b of results.slice(2)) expect(b.content).to.deep.equal(MAX_USES);
      expect(r.body.usage.server_tool_use.web_search_requests).to.equal(2);
      expect(await ledger(o.org.id)).to.equal(rows + 2);
    });
  });

  it('streams the final answer token by token as the upstream produces it', async () => {
    env().sim.knobs.set('*', { tokenDelayMs: 120 });
    const stream = client.messages.stream({ model: 'sim-chat', max_tokens: 300, tools: [SEARCH], messages: [{ role: 'user', content: 'Please search for honey bees' }] });
    const seen: Array<{ type: string; at: number }> = [];
    stream.on('streamEvent', (e) => seen.push({ type: e.type === 'content_block_delta' ? e.delta.type : e.type, at: Date.now() }));
    const final = await stream.finalMessage();
    expectCitedAnswer(final.content as unknown as Block[]);
    const deltas = seen.filter((e) => e.type === 'text_delta');
    expect(deltas.length).to.be.greaterThan(3);
    const stop = seen.find((e) => e.type === 'message_stop')!;
    // The upstream pauses 120 ms after each piece: text that were buffered would arrive all at once.
    expect(stop.at - deltas[0].at, 'the first delta arrived while the upstream was still streaming').to.be.at.least(100 * (deltas.length - 1));
    expect(seen.findIndex((e) => e.type === 'text_delta')).to.be.greaterThan(seen.findIndex((e) => e.type === 'content_block_stop'), 'the search result went out first');
  });

  it('a tool_choice forcing web_search forces the first turn only', async () => {
    const rows = await ledger(o.org.id);
    const r = await call('POST', '/v1/messages', {
      headers: { ...keyHeader(o.key), ...V },
      json: { model: 'sim-chat', max_tokens: 300, tools: [SEARCH], tool_choice: { type: 'tool', name: 'web_search' }, messages: [{ role: 'user', content: 'tell me about bees' }] },
    });
    expect(r.status, r.text).to.equal(200);
    expect((r.body.content as Block[]).map((b) => b.type)).to.deep.equal(['server_tool_use', 'web_search_tool_result', 'text']);
    expect(await ledger(o.org.id)).to.equal(rows + 1);
    const sent = upstreamRequests();
    expect(sent.map((b) => b.tool_choice)).to.deep.equal([{ type: 'function', function: { name: 'web_search' } }, 'auto']);
  });

  it('leaves chat completions alone: a function tool named web_search is passed through', async () => {
    const rows = await ledger(o.org.id);
    const queries = up.queries.length;
    const tools = [{ type: 'function', function: { name: 'web_search', parameters: { type: 'object', properties: { query: { type: 'string' } } } } }];
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', tools, messages: [{ role: 'user', content: 'search for honey bees' }] } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.choices[0].finish_reason).to.equal('tool_calls');
    expect(r.body.choices[0].message.tool_calls[0].function).to.deep.equal({ name: 'web_search', arguments: JSON.stringify({ query: 'honey bees' }) });
    const sent = upstreamRequests();
    expect(sent).to.have.length(1);
    expect(sent[0].tools).to.deep.equal(tools);
    expect(await ledger(o.org.id)).to.equal(rows);
    expect(up.queries.length, 'nothing searched').to.equal(queries);
  });

  function resetSimLog() {
    env().sim.log.entries.length = 0;
  }

  it('compaction (compact_20260112) runs before the search loop: the compaction block first, then the search and the cited answer, JSON and streamed; pause_after_compaction answers the block alone', async function () {
    this.timeout(30_000);
    // the summary says what the user asked, so the model searches from the compacted context
    env().sim.knobs.set('sim-chat-1', { replyWords: ['The', 'user', 'asked', 'to', 'search', 'for', 'honey', 'bees'] });
    const long = Array.from({ length: 20_000 }, (_, i) => `LONGANSWER${i}`).join(' ');
    const messages: Anthropic.Beta.BetaMessageParam[] = [{ role: 'user', content: 'hello' }, { role: 'assistant', content: long }, { role: 'user', content: 'Please search for honey bees' }];
    const edit = { type: 'compact_20260112' as const, trigger: { type: 'input_tokens' as const, value: 50_000 } };
    const seen = env().sim.log.entries.length;
    const m = await client.beta.messages.create({ model: 'sim-chat', max_tokens: 300, betas: ['compact-2026-01-12'], tools: [SEARCH], messages, context_management: { edits: [edit] } });
    expect(m.content[0].type).to.equal('compaction');
    expectCitedAnswer(m.content.slice(1) as unknown as Block[]);
    expect(m.usage.iterations!.map((i) => i.type)).to.deep.equal(['compaction', 'message']);
    const bodies = upstreamRequests().slice(-3).map((b) => JSON.stringify(b));
    expect(env().sim.log.entries.length - seen, 'the summary pass and two loop turns').to.equal(3);
    expect(bodies.slice(1).every((b) => !b.includes('LONGANSWER')), 'the loop from the compacted context').to.equal(true);

    const stream = client.beta.messages.stream({ model: 'sim-chat', max_tokens: 300, betas: ['compact-2026-01-12'], tools: [SEARCH], messages, context_management: { edits: [edit] } });
    const final = await stream.finalMessage();
    expect(final.content.map((b) => b.type)).to.deep.equal(['compaction', 'server_tool_use', 'web_search_tool_result', 'text']);
    expect(final.usage.iterations!.map((i) => i.type)).to.deep.equal(['compaction', 'message']);

    const before = env().sim.log.entries.length;
    const paused = await client.beta.messages.create({ model: 'sim-chat', max_tokens: 300, betas: ['compact-2026-01-12'], tools: [SEARCH], messages, context_management: { edits: [{ ...edit, pause_after_compaction: true }] } });
    expect([paused.content.map((b) => b.type), paused.stop_reason]).to.deep.equal([['compaction'], 'compaction']);
    expect(env().sim.log.entries.length - before, 'the summary pass only').to.equal(1);
    env().sim.knobs.reset();
  });
});

describe('native web search cancelled by the client', () => {
  beforeEach(resetSim);

  it('bills the searches already made, not the one cut short or the ones never started', async () => {
    const up = await startSearchUpstream((q) => (q.endsWith('(2)') ? 1500 : 0));
    try {
      const o = await buildOrg(env().redis);
      await useSearchProvider(o.org.id, up, 'h16-cancel');
      const ac = new AbortController();
      const res = await fetch(`${env().gw.url}/v1/messages`, {
        method: 'POST',
        signal: ac.signal,
        headers: { ...keyHeader(o.key), ...V, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sim-chat', max_tokens: 300, stream: true, tools: [SEARCH], messages: [{ role: 'user', content: 'search for bees and keep searching' }] }),
      });
      expect(res.status).to.equal(200);
      const reader = res.body!.getReader();
      let seen = '';
      while (!seen.includes('web_search_tool_result')) seen += new TextDecoder().decode((await reader.read()).value);
      expect(await waitFor(() => up.queries.length === 2, 3000, 10), 'the second search started').to.equal(true);
      ac.abort();
      await new Promise((r) => setTimeout(r, 2500)); // past the moment the slow search would have answered
      expect(await ledger(o.org.id), 'only the finished search').to.equal(1);
      expect(up.queries).to.deep.equal(['bees', 'bees (2)']);
    } finally {
      await up.close();
    }
  });
});

describe('native web search when not entitled', () => {
  let up: SearchUpstream;
  beforeEach(resetSim);
  before(async () => {
    up = await startSearchUpstream();
  });
  after(() => up.close());

  async function expectInBand(key: string, orgId: string, code: string, anthropicCode: string) {
    const queries = up.queries.length;
    for (const stream of [false, true]) {
      const client = new Anthropic({ apiKey: key, baseURL: env().gw.url, maxRetries: 0 });
      const params = { model: 'sim-chat', max_tokens: 300, tools: [SEARCH], messages: [{ role: 'user' as const, content: 'search for honey bees' }] };
      const m = stream ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
      const content = m.content as unknown as Block[];
      expect(content.map((b) => b.type), code).to.deep.equal(['server_tool_use', 'web_search_tool_result', 'text']);
      expect(content[1].content).to.deep.equal({ type: 'web_search_tool_result_error', error_code: anthropicCode, code });
      expect(String(content[2].text), 'the model saw the code and went on').to.include(code);
      expect(m.usage.server_tool_use?.web_search_requests).to.equal(0);
    }
    expect(await ledger(orgId)).to.equal(0);
    expect(up.queries.length).to.equal(queries);
  }

  it('quota_exceeded: no allowance and no overage', async () => {
    const o = await buildOrg(env().redis);
    await useSearchProvider(o.org.id, up, 'h16-quota', { monthlyAllowance: 0 });
    await expectInBand(o.key, o.org.id, 'quota_exceeded', 'too_many_requests');
  });

  it('mcp_tool_disabled: the org policy denies web_search', async () => {
    const o = await buildOrg(env().redis, { policies: { mcp_tools: { web_search: 'deny' } } });
    await useSearchProvider(o.org.id, up, 'h16-policy');
    await expectInBand(o.key, o.org.id, 'mcp_tool_disabled', 'unavailable');
  });

  it('provider_unconfigured: the default provider was disabled', async () => {
    const o = await buildOrg(env().redis);
    await useSearchProvider(o.org.id, up, 'h16-disabled');
    await SearchProvider.update({ enabled: false }, { where: { name: 'h16-disabled' } });
    await bumpEpoch(env().redis);
    await expectInBand(o.key, o.org.id, 'provider_unconfigured', 'unavailable');
  });

  it('web_search_disabled: the platform kill switch', async () => {
    const o = await buildOrg(env().redis);
    await useSearchProvider(o.org.id, up, 'h16-switch');
    await setSwitch(env().redis, 'web_search', true);
    try {
      expect(await waitFor(() => env().gw.ctx.switches.engaged('web_search'), 2000, 10)).to.equal(true);
      await expectInBand(o.key, o.org.id, 'web_search_disabled', 'unavailable');
    } finally {
      await setSwitch(env().redis, 'web_search', false);
      await waitFor(() => !env().gw.ctx.switches.engaged('web_search'), 2000, 10);
    }
  });
});
