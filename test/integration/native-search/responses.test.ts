import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { postSse } from '../../helpers/sse-events';
import { call, keyHeader } from '../../helpers/http';
import { startSearchUpstream, useSearchProvider, type SearchUpstream } from '../../helpers/search-upstream';
import { SearchUsage, StoredResponse } from '../../../shared/db/models';
import { ended } from '../../helpers/responses-background';
import { waitFor } from '../../helpers/wait';
import { QueryTypes } from 'sequelize';
import { db } from '../../../shared/db/sequelize';

const ledger = (orgId: string) => SearchUsage.count({ where: { orgId } });

describe('native web search on /v1/responses', () => {
  let up: SearchUpstream;
  let o: TestOrg;
  let client: OpenAI;
  beforeEach(resetSim);
  before(async () => {
    up = await startSearchUpstream();
    o = await buildOrg(env().redis);
    await useSearchProvider(o.org.id, up, 'h16-resp-search');
    client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  after(() => up.close());

  for (const model of ['sim-chat', 'sim-claude']) {
    it(`the openai client gets a web_search_call item and a cited message on ${model}`, async () => {
      const rows = await ledger(o.org.id);
      const r = await client.responses.create({ model, input: 'search for honey bees', tools: [{ type: 'web_search' }] });
      expect(r.status).to.equal('completed');
      expect(r.output.map((i) => i.type)).to.deep.equal(['web_search_call', 'message']);
      const ws = r.output[0] as OpenAI.Responses.ResponseFunctionWebSearch & { encrypted_content?: string };
      expect(ws.status).to.equal('completed');
      expect(ws.action).to.deep.include({ type: 'search', query: 'honey bees' });
      expect((ws.action as { sources: unknown[] }).sources).to.deep.equal([{ type: 'url', url: 'https://docs.example.org/honey-bees/1' }, { type: 'url', url: 'https://docs.example.org/honey-bees/2' }]);
      expect(ws.encrypted_content).to.be.a('string');
      expect(r.output_text).to.include('https://docs.example.org/honey-bees/1');
      const part = (r.output[1] as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText;
      const url = 'https://docs.example.org/honey-bees/1';
      expect(part.annotations).to.deep.equal([{ type: 'url_citation', start_index: part.text.indexOf(url), end_index: part.text.indexOf(url) + url.length, url, title: 'Result 1 about honey bees' }]);
      expect(await ledger(o.org.id)).to.equal(rows + 1);
      for (const e of env().sim.log.entries) expect(JSON.stringify(e.body)).not.to.match(/"type":"web_search"/);
    });
  }

  it('streams the web_search_call events, then the message with its annotation', async () => {
    const s = await postSse('/v1/responses', keyHeader(o.key), { model: 'sim-chat', input: 'search for honey bees', tools: [{ type: 'web_search_preview' }], stream: true });
    expect(s.status, s.text).to.equal(200);
    const types = s.events.map((e) => e.event);
    const deltas = types.filter((t) => t === 'response.output_text.delta').length;
    expect(deltas, 'the answer streams token by token').to.be.greaterThan(3);
    expect(types).to.deep.equal([
      'response.created', 'response.in_progress',
      'response.output_item.added', 'response.web_search_call.in_progress', 'response.web_search_call.searching', 'response.web_search_call.completed', 'response.output_item.done',
      'response.output_item.added', 'response.content_part.added', ...Array<string>(deltas).fill('response.output_text.delta'), 'response.output_text.annotation.added', 'response.output_text.done', 'response.content_part.done', 'response.output_item.done',
      'response.completed',
    ]);
    expect(s.events.map((e) => e.data.sequence_number)).to.deep.equal(types.map((_, i) => i));
    const done = s.events.at(-1)!.data.response;
    expect(done.output.map((i: { type: string }) => i.type)).to.deep.equal(['web_search_call', 'message']);
    const message = done.output[1] as { id: string; content: Array<{ text: string }> };
    const textEvents = s.events.filter((e) => String(e.event).startsWith('response.output_text.') || String(e.event).startsWith('response.content_part.'));
    expect(textEvents.every((e) => e.data.item_id === message.id), 'every text event names the final message item').to.equal(true);
    expect(s.events.filter((e) => e.event === 'response.output_text.delta').map((e) => e.data.delta).join('')).to.equal(message.content[0].text);
  });

  it('a stream the upstream breaks ends with response.failed (the Response failed, with its error); the SDK reads it', async () => {
    // the search step's call (its tool call in a few chunks) completes; the answer's is cut after its first words
    env().sim.knobs.set('sim-chat-1', { dropAfterChunks: 12 });
    const s = await postSse('/v1/responses', keyHeader(o.key), { model: 'sim-chat', input: 'search for honey bees', tools: [{ type: 'web_search' }], stream: true });
    expect(s.status, s.text).to.equal(200);
    expect(s.events[0].event).to.equal('response.created');
    const last = s.events.at(-1)!;
    expect(last.event).to.equal('response.failed');
    expect(last.data.sequence_number).to.equal(s.events.length - 1);
    expect(last.data.response).to.include({ id: s.events[0].data.response.id, status: 'failed', completed_at: null, usage: null });
    expect(last.data.response.error.code).to.equal('server_error');
    expect(s.events.map((e) => e.event)).to.not.include.members(['error', 'response.completed']);
    expect(last.data.response.output.map((i: { type: string; status: string }) => `${i.type}:${i.status}`)).to.deep.equal(['web_search_call:completed']);
    const got = await call('GET', `/v1/responses/${last.data.response.id}`, { headers: keyHeader(o.key) });
    expect(got.status, 'the failed Response is stored and retrievable').to.equal(200);
    expect(got.body).to.deep.equal(last.data.response);
    const final = await client.responses.stream({ model: 'sim-chat', input: 'search for honey bees', tools: [{ type: 'web_search' }] }).finalResponse();
    expect(final.status).to.equal('failed');
    expect(final.error?.code).to.equal('server_error');
  });

  it('the openai client streams the final answer delta by delta as the upstream produces it', async () => {
    env().sim.knobs.set('*', { tokenDelayMs: 120 });
    const stream = client.responses.stream({ model: 'sim-chat', input: 'search for honey bees', tools: [{ type: 'web_search' }] });
    const seen: Array<{ type: string; at: number }> = [];
    stream.on('event', (e) => seen.push({ type: e.type, at: Date.now() }));
    const final = await stream.finalResponse();
    expect(final.output.map((i) => i.type)).to.deep.equal(['web_search_call', 'message']);
    const deltas = seen.filter((e) => e.type === 'response.output_text.delta');
    expect(deltas.length).to.be.greaterThan(3);
    const completed = seen.find((e) => e.type === 'response.completed')!;
    // The upstream pauses 120 ms after each piece: text that were buffered would arrive all at once.
    expect(completed.at - deltas[0].at, 'the first delta arrived while the upstream was still streaming').to.be.at.least(100 * (deltas.length - 1));
    expect(seen.findIndex((e) => e.type === 'response.web_search_call.completed')).to.be.lessThan(seen.findIndex((e) => e.type === 'response.output_text.delta'));
    const text = final.output[1].type === 'message' ? final.output[1].content[0] : undefined;
    expect(text?.type === 'output_text' && text.annotations.length).to.equal(1);
  });

  it('a follow-up by previous_response_id or with the echoed encrypted_content reuses the results; without it the search re-runs', async () => {
    const first = await client.responses.create({ model: 'sim-chat', input: 'search for honey bees', tools: [{ type: 'web_search' }] });
    const rows = await ledger(o.org.id);
    const byId = await client.responses.create({ model: 'sim-chat', previous_response_id: first.id, input: 'thanks, summarise it', tools: [{ type: 'web_search' }] });
    expect(byId.output.map((i) => i.type)).to.deep.equal(['message']);
    expect(await ledger(o.org.id)).to.equal(rows);

    const echo = (ws: Record<string, unknown>) =>
      client.responses.create({
        model: 'sim-chat',
        tools: [{ type: 'web_search' }],
        store: false,
        input: [{ role: 'user', content: 'search for honey bees' }, ws as never, { role: 'assistant', content: first.output_text }, { role: 'user', content: 'thanks, summarise it' }],
      });
    await echo(first.output[0] as never);
    expect(await ledger(o.org.id), 'echoed: no new search').to.equal(rows);
    const { encrypted_content: _, ...bare } = first.output[0] as unknown as Record<string, unknown>;
    await echo(bare);
    expect(await ledger(o.org.id), 'not echoed: re-run, billed').to.equal(rows + 1);
  });

  it('not entitled: a failed web_search_call with the code, and the answer goes on', async () => {
    const poor = await buildOrg(env().redis);
    await useSearchProvider(poor.org.id, up, 'h16-resp-quota', { monthlyAllowance: 0 });
    const c = new OpenAI({ apiKey: poor.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const r = await c.responses.create({ model: 'sim-chat', input: 'search for honey bees', tools: [{ type: 'web_search' }] });
    expect(r.output.map((i) => i.type)).to.deep.equal(['web_search_call', 'message']);
    expect(r.output[0]).to.deep.include({ status: 'failed' });
    expect((r.output[0] as unknown as { error: { code: string } }).error.code).to.equal('quota_exceeded');
    expect(r.output_text).to.include('quota_exceeded');
    expect(await ledger(poor.org.id)).to.equal(0);
  });

  it('max_tool_calls caps the searches the model makes (further calls are not run), JSON and streamed; 0 refused; echoed in the Response', async () => {
    const ask = (extra: Record<string, unknown>) => ({ model: 'sim-chat', input: 'search for wasps and keep searching', tools: [{ type: 'web_search' as const }], ...extra });
    const rows = await ledger(o.org.id);
    const r = await client.responses.create(ask({ max_tool_calls: 2 }));
    expect(r.status).to.equal('completed');
    expect(r.max_tool_calls).to.equal(2);
    expect(r.output.map((i) => i.type)).to.deep.equal(['web_search_call', 'web_search_call', 'message']);
    expect(await ledger(o.org.id)).to.equal(rows + 2);
    // the turn after the second search is offered no search tool, so the model answers
    const offered = env().sim.log.entries.map((e) => ((e.body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name));
    expect(offered).to.deep.equal([['web_search', 'web_fetch'], ['web_search', 'web_fetch'], []]);

    resetSim();
    const s = await postSse('/v1/responses', keyHeader(o.key), { ...ask({ max_tool_calls: 1 }), stream: true });
    expect(s.status, s.text).to.equal(200);
    const done = s.events.at(-1)!.data.response;
    expect(done.max_tool_calls).to.equal(1);
    expect(done.output.map((i: { type: string }) => i.type)).to.deep.equal(['web_search_call', 'message']);
    expect(await ledger(o.org.id)).to.equal(rows + 3);

    // 0 is refused, as OpenAI refuses it (its minimum is 1: responses-openai-refusals.test.ts)
    const none = await client.responses.create(ask({ max_tool_calls: 0, tool_choice: { type: 'web_search' } })).catch((e: unknown) => e);
    expect(none).to.be.instanceOf(OpenAI.BadRequestError);
    expect(none).to.include({ status: 400, code: 'integer_below_min_value', param: 'max_tool_calls' });
    expect(await ledger(o.org.id)).to.equal(rows + 3);
  });

  it('server-side compaction runs before the search loop: the compaction item first, then the search and the cited answer, JSON and streamed; the loop turns are later jobs of the request (both billed)', async () => {
    // the summary says what the user asked, so the model searches from the compacted context
    env().sim.knobs.set('sim-chat-1', { replyWords: ['The', 'user', 'asked', 'to', 'search', 'for', 'honey', 'bees.'] });
    const seen = env().sim.log.entries.length;
    const r = await client.responses.create({ model: 'sim-chat', input: [{ role: 'user', content: 'search for honey bees' }, { type: 'compaction_trigger' }], tools: [{ type: 'web_search' }] });
    expect(r.output.map((i) => i.type)).to.deep.equal(['compaction', 'web_search_call', 'message']);
    const bodies = env().sim.log.entries.slice(seen).map((e) => JSON.stringify(e.body));
    expect(bodies[0], 'the summary pass first, asked for text').to.include('CONTEXT CHECKPOINT COMPACTION').and.to.include('"tool_choice":"none"');
    expect(bodies.slice(1).every((b) => b.includes('Summary of the earlier conversation')), 'the loop from the compacted context').to.equal(true);
    expect(r.usage!.input_tokens, 'the usage counts the pass and the turns').to.be.above(0);
    const stream = await client.responses.create({ model: 'sim-chat', input: [{ role: 'user', content: 'search for honey bees' }, { type: 'compaction_trigger' }], tools: [{ type: 'web_search' }], stream: true });
    const added: string[] = [];
    let last: OpenAI.Responses.ResponseStreamEvent | undefined;
    for await (const ev of stream) {
      if (ev.type === 'response.output_item.added') added.push(ev.item.type);
      last = ev;
    }
    expect(added).to.deep.equal(['compaction', 'web_search_call', 'message']);
    expect((last as OpenAI.Responses.ResponseCompletedEvent).response.output.map((i) => i.type)).to.deep.equal(['compaction', 'web_search_call', 'message']);
    env().sim.knobs.reset();
  });

  it('in the background: the search loop runs in the run (JSON polled and streamed), the stored response has the web_search_call and the cited message, searches and turns billed, one Activity row; a cancel stops it', async function () {
    this.timeout(30_000);
    // read before the create: the background run may bill its search before the create's answer is read
    const before = await ledger(o.org.id);
    const { data: queued, response: created } = await client.responses.create({ model: 'sim-chat', input: 'search for honey bees', tools: [{ type: 'web_search' }], background: true }).withResponse();
    expect(queued.status).to.equal('queued');
    const r = await ended(client, queued.id);
    expect(r.status).to.equal('completed');
    expect(r.output.map((i) => i.type)).to.deep.equal(['web_search_call', 'message']);
    expect(r.output_text).to.include('https://docs.example.org/honey-bees/1');
    expect(await ledger(o.org.id), 'the search billed').to.equal(before + 1);
    const rows = () => db().query<{ units: Record<string, number> | null; status: number; input_tokens: number }>('SELECT units, status, input_tokens FROM request_logs WHERE request_id = :id', { type: QueryTypes.SELECT, replacements: { id: created.headers.get('x-service-request-id') } });
    expect(await waitFor(async () => (await rows()).length === 1, 10_000), 'one Activity row').to.equal(true);
    const [row] = await rows();
    expect([row.status, row.units?.web_search_requests, row.input_tokens > 0]).to.deep.equal([200, 1, true]);
    const stream = await client.responses.create({ model: 'sim-chat', input: 'search for honey bees', tools: [{ type: 'web_search' }], background: true, stream: true });
    const types: string[] = [];
    let last: OpenAI.Responses.ResponseStreamEvent | undefined;
    for await (const ev of stream) {
      types.push(ev.type);
      last = ev;
    }
    expect(types.slice(0, 2)).to.deep.equal(['response.created', 'response.queued']);
    expect(types).to.include('response.web_search_call.completed');
    expect(last!.type).to.equal('response.completed');
    const done = (last as OpenAI.Responses.ResponseCompletedEvent).response;
    expect((await client.responses.retrieve(done.id)).output.map((i) => i.type), 'the stored response').to.deep.equal(['web_search_call', 'message']);

    // a compaction item this gateway did not seal for the org is refused before anything is stored
    const stored = await StoredResponse.count({ where: { orgId: o.org.id } });
    const forged = await call('POST', '/v1/responses', { headers: keyHeader(o.key), json: { model: 'sim-chat', background: true, tools: [{ type: 'web_search' }], input: [{ type: 'compaction', encrypted_content: 'not-sealed-here' }, { role: 'user', content: 'search for honey bees' }] } });
    expect([forged.status, forged.body.error.param]).to.deep.equal([400, 'input[0]']);
    expect(await StoredResponse.count({ where: { orgId: o.org.id } }), 'nothing stored').to.equal(stored);

    // cancelled while its first turn is held upstream: it ends cancelled, and no later turn runs
    env().sim.knobs.set('sim-chat-1', { hold: true });
    const sentBefore = env().sim.log.entries.length;
    const held = await client.responses.create({ model: 'sim-chat', input: 'search for honey bees', tools: [{ type: 'web_search' }], background: true });
    expect(await waitFor(() => env().sim.log.entries.length > sentBefore, 10_000), 'its first turn reached the upstream').to.equal(true);
    const sent = env().sim.log.entries.length;
    expect((await client.responses.cancel(held.id)).status).to.equal('cancelled');
    expect(await waitFor(() => env().sim.log.entries.at(-1)!.aborted === true, 10_000), 'its upstream request was aborted').to.equal(true);
    env().sim.knobs.reset();
    env().sim.knobs.release();
    expect((await ended(client, held.id)).status).to.equal('cancelled');
    await new Promise((x) => setTimeout(x, 300));
    expect(env().sim.log.entries.length, 'no later turn').to.equal(sent);
  });

  it("sim-claude: the usage sums each turn's cache writes (cache_creation_input_tokens) as input_tokens_details.cache_write_tokens, JSON and streamed", async () => {
    env().sim.knobs.set('*', { usageExtra: { cache_read_input_tokens: 7, cache_creation_input_tokens: 5 } });
    const ask = { model: 'sim-claude', input: 'search for honey bees', tools: [{ type: 'web_search' }] };
    const r = await call('POST', '/v1/responses', { headers: keyHeader(o.key), json: ask });
    expect(r.status, r.text).to.equal(200);
    const turns = env().sim.log.entries.filter((e) => e.path === '/v1/messages').length;
    expect(turns, 'a search turn and the answer').to.be.at.least(2);
    expect(r.body.usage.input_tokens_details).to.deep.equal({ cached_tokens: 7 * turns, cache_write_tokens: 5 * turns });
    const s = await postSse('/v1/responses', keyHeader(o.key), Object.assign({ stream: true }, ask));
    expect(s.events.at(-1)!.data.response.usage.input_tokens_details).to.deep.equal({ cached_tokens: 7 * turns, cache_write_tokens: 5 * turns });
  });
  it("a function call output answering no call is OpenAI's 400 'No tool call found…' with a web_search tool too, JSON, streamed and background, before any search or upstream call", async () => {
    const rows = await ledger(o.org.id);
    const input = [{ type: 'function_call_output', call_id: 'call_gone', output: '42' }, { role: 'user', content: 'search for honey bees' }];
    for (const extra of [{}, { stream: true }, { background: true }]) {
      const r = await call('POST', '/v1/responses', { headers: keyHeader(o.key), json: Object.assign({ model: 'sim-chat', input, tools: [{ type: 'web_search' }] }, extra) });
      expect(r.status, `${JSON.stringify(extra)} ${r.text}`).to.equal(400);
      expect(r.body.error).to.deep.include({ code: 'invalid_request', param: 'input', message: 'No tool call found for function call output with call_id call_gone.' });
    }
    expect(env().sim.log.entries).to.have.length(0);
    expect(await ledger(o.org.id)).to.equal(rows);
  });
});
