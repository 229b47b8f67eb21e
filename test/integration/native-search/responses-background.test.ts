import { expect } from 'chai';
import OpenAI from 'openai';
import { QueryTypes } from 'sequelize';
import { env } from '../../helpers/harness';
import { startSearchUpstream, useSearchProvider, type SearchUpstream } from '../../helpers/search-upstream';
import { backgroundSuite, ended, outcome } from '../../helpers/responses-background';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { SearchUsage, StoredResponse, UsageEvent } from '../../../shared/db/models';
import { keys } from '../../../shared/redis/keys';
import { db } from '../../../shared/db/sequelize';
import { drainBackground } from '../../../api/routes/responses/background';
import { adoptLapsed } from '../../../api/routes/responses/background-resume';

const SEARCH = [{ type: 'web_search' as const }];
type Input = OpenAI.Responses.ResponseCreateParams['input'];
const entries = () => env().sim.log.entries;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The refusal's status and error fields, as the SDK read them. */
function refusal(err: unknown): unknown[] {
  expect(err, 'refused').to.be.instanceOf(OpenAI.APIError);
  const e = err as InstanceType<typeof OpenAI.APIError>;
  return [e.status, e.code, e.type, e.param];
}

/** The Activity rows of one request. */
const rows = (requestId: string) =>
  db().query<{ status: number }>('SELECT status FROM request_logs WHERE request_id = :id', { type: QueryTypes.SELECT, replacements: { id: requestId } });

/** A hosted search background response whose first turn asked for a search and whose second turn the simulator holds. */
async function secondTurnHeld(c: OpenAI): Promise<{ made: OpenAI.Responses.Response; requestId: string }> {
  env().sim.knobs.set('sim-chat-1', { hold: true });
  const { data: made, response } = await c.responses.create({ model: 'sim-chat', input: 'search for honey bees', tools: SEARCH, background: true }).withResponse();
  expect(await waitFor(() => entries().length === 1, 10_000), 'its first turn reached the upstream').to.equal(true);
  env().sim.knobs.release(); // the first turn asks for a search; the second is held
  expect(await waitFor(() => entries().length === 2, 10_000), 'its second turn reached the upstream').to.equal(true);
  return { made, requestId: response.headers.get('x-service-request-id')! };
}

/**
 * Background responses with hosted web search: the input checked and its echoed search calls unfolded
 * before the response is stored, and a cancel from any pod stopping the loop's step in flight.
 */
describe('native web search on /v1/responses in the background', () => {
  const s = backgroundSuite();
  let up: SearchUpstream;
  let viaB: OpenAI;
  before(async () => {
    // a query naming "slow" is answered after 8 s: a search in flight while a test cancels it
    up = await startSearchUpstream((q) => (q.includes('slow') ? 8000 : 0));
    await useSearchProvider(s.o.org.id, up, 'wb-bg-search');
    viaB = new OpenAI({ apiKey: s.o.key, baseURL: `${s.podB.url}/v1`, maxRetries: 0 });
  });
  after(() => up.close());

  it('an input the foreground refuses is refused the same (400) before anything is stored, queued, searched or billed; the searches a compaction stands for are not re-run', async function () {
    this.timeout(30_000);
    const bare = { type: 'web_search_call', id: 'ws_old1', status: 'completed', action: { type: 'search', query: 'old bees' } };
    const ask = { role: 'user', content: 'search for honey bees' };
    const cases: Array<[string, unknown[], unknown[]]> = [
      ['an unknown role after an echoed search (which would be re-run)', [ask, bare, { role: 'bogus', content: 'x' }], [400, 'invalid_value', 'invalid_request_error', 'input[2]']],
      ['an item type the gateway does not take', [ask, bare, { type: 'file_search_call', id: 'fs_1', queries: ['x'], status: 'completed' }], [400, 'invalid_request', 'invalid_request_error', 'input[2].type']],
      // the client's index, not the unfolded input's (each echoed search call is two items there)
      ['a compaction item not sealed for the org, after an echoed search', [ask, bare, { type: 'compaction', encrypted_content: 'not-sealed-here' }, ask], [400, 'invalid_request', 'invalid_request_error', 'input[2]']],
    ];
    const [stored, billed, searched] = [await StoredResponse.count({ where: { orgId: s.o.org.id } }), await UsageEvent.count({ where: { orgId: s.o.org.id } }), await SearchUsage.count({ where: { orgId: s.o.org.id } })];
    const queries = up.queries.length;
    for (const [what, input, expected] of cases) {
      for (const background of [false, true]) {
        const err = await outcome(s.client.responses.create({ model: 'sim-chat', tools: SEARCH, input: input as Input, background }));
        expect(refusal(err), `${what} (background ${background})`).to.deep.equal(expected);
      }
    }
    expect(await StoredResponse.count({ where: { orgId: s.o.org.id } }), 'nothing stored').to.equal(stored);
    expect(entries(), 'nothing sent upstream').to.have.length(0);
    expect(up.queries.length, 'no echoed search re-run').to.equal(queries);
    await usageSettled();
    expect([await UsageEvent.count({ where: { orgId: s.o.org.id } }), await SearchUsage.count({ where: { orgId: s.o.org.id } })], 'nothing billed').to.deep.equal([billed, searched]);

    // the searches a compaction item stands for (before it) are not re-run
    const compacted = await s.client.responses.compact({ model: 'sim-chat', input: 'something to compact' });
    const compaction = compacted.output.find((i) => i.type === 'compaction')!;
    for (const background of [false, true]) {
      const r = await s.client.responses.create({ model: 'sim-chat', tools: SEARCH, background, input: [ask, bare, compaction, { role: 'user', content: 'thanks' }] as Input });
      expect((await ended(s.client, r.id)).status, `background ${background}`).to.equal('completed');
    }
    expect(up.queries.length, 'nothing re-run').to.equal(queries);
  });

  it('the queued response holds its input as it runs (the echoed search unfolded): its conversation, input_items and a follow-up of it once cancelled', async function () {
    this.timeout(30_000);
    const first = await s.client.responses.create({ model: 'sim-chat', input: 'search for honey bees', tools: SEARCH });
    const input = [{ role: 'user', content: 'search for honey bees' }, first.output[0], { role: 'user', content: 'thanks, summarise the otters' }] as Input;
    const queries = up.queries.length;
    env().sim.knobs.set('sim-chat-1', { hold: true });
    const seen = entries().length;
    const made = await s.client.responses.create({ model: 'sim-chat', input, tools: SEARCH, background: true });
    expect(await waitFor(() => entries().length > seen, 10_000), 'its turn reached the upstream').to.equal(true);
    const conversation = async (id: string) => (await StoredResponse.findOne({ where: { id } }))!.conversation as Array<{ role: string; content: unknown }>;
    const running = await conversation(made.id);
    expect(running.map((m) => m.role), 'the turn, its echoed search unfolded').to.deep.equal(['user', 'assistant', 'tool', 'user']);
    expect(String(running[2].content)).to.include('https://docs.example.org/honey-bees/1');
    const items = async (id: string) => (await s.client.responses.inputItems.list(id)).data;
    const runningItems = await items(made.id);
    env().sim.knobs.release();
    const done = await ended(s.client, made.id);
    expect(done.status).to.equal('completed');
    expect((await conversation(made.id)).slice(0, 4), 'the settled conversation goes on from the queued one').to.deep.equal(running);
    expect(await items(made.id), 'the same input items').to.deep.equal(runningItems);
    expect(up.queries.length, 'the sealed search reused').to.equal(queries);

    // cancelled while held, a follow-up continues its turn
    const held = await s.client.responses.create({ model: 'sim-chat', input: 'tell me about the otters of the lake', tools: SEARCH, background: true });
    expect(await waitFor(() => entries().length > seen + 1, 10_000), 'its turn reached the upstream').to.equal(true);
    expect((await s.client.responses.cancel(held.id)).status).to.equal('cancelled');
    env().sim.knobs.reset();
    env().sim.knobs.release();
    const next = await s.client.responses.create({ model: 'sim-chat', input: 'and beavers?', previous_response_id: held.id });
    expect(next.status).to.equal('completed');
    expect(JSON.stringify(entries().at(-1)!.body), 'the follow-up carried the cancelled turn').to.include('otters of the lake');
  });

  it('a cancel from another pod aborts the upstream turn in flight: the run ends at once, cancelled, the aborted turn not billed', async function () {
    this.timeout(30_000);
    const { made, requestId } = await secondTurnHeld(s.client);
    expect((await viaB.responses.cancel(made.id)).status).to.equal('cancelled');
    expect(await waitFor(() => entries()[1].aborted === true, 3000), 'the turn in flight was aborted').to.equal(true);
    expect(await waitFor(async () => (await env().redis.exists(keys.backgroundJob(made.id))) === 0, 3000), 'the run ended (its lease gone)').to.equal(true);
    env().sim.knobs.reset();
    env().sim.knobs.release();
    await sleep(300);
    expect(entries(), 'no later turn').to.have.length(2);
    expect((await s.client.responses.retrieve(made.id)).status).to.equal('cancelled');
    await usageSettled();
    const billed = await UsageEvent.findAll({ where: { requestId: [requestId, `${requestId}.t1`] } });
    expect(billed.map((e) => e.requestId), 'the first turn billed, the aborted one not').to.deep.equal([requestId]);
    expect(await waitFor(async () => (await rows(requestId)).length === 1, 10_000), 'one Activity row').to.equal(true);
    expect((await rows(requestId))[0].status, 'written as cancelled').to.equal(499);
  });

  it('a cancel from another pod aborts a search in flight: the run ends at once, no later turn', async function () {
    this.timeout(30_000);
    const queries = up.queries.length;
    const { data: made, response } = await s.client.responses.create({ model: 'sim-chat', input: 'search for slow bees', tools: SEARCH, background: true }).withResponse();
    expect(await waitFor(() => up.queries.length > queries, 10_000), 'its search reached the search upstream').to.equal(true);
    const t = Date.now();
    expect((await viaB.responses.cancel(made.id)).status).to.equal('cancelled');
    expect(await waitFor(async () => (await env().redis.exists(keys.backgroundJob(made.id))) === 0, 3000), 'the run ended (its lease gone)').to.equal(true);
    expect(Date.now() - t, 'well before the search would have answered').to.be.below(4000);
    expect(entries(), 'no later turn').to.have.length(1);
    const requestId = response.headers.get('x-service-request-id')!;
    expect(await waitFor(async () => (await rows(requestId)).length === 1, 10_000), 'one Activity row').to.equal(true);
    expect((await rows(requestId))[0].status, 'written as cancelled').to.equal(499);
  });

  it('a stopping pod hands a search loop off mid-run: another pod runs it again from the start to completed; what each run did is billed as done', async function () {
    this.timeout(40_000);
    const { made, requestId } = await secondTurnHeld(s.client);
    await drainBackground(env().gw.ctx, 50);
    expect(await waitFor(() => entries()[1].aborted === true, 3000), 'the turn in flight was aborted').to.equal(true);
    expect((await s.client.responses.retrieve(made.id)).status, 'handed off, not failed').to.equal('in_progress');
    env().sim.knobs.reset();
    await db().query("UPDATE stored_responses SET created_at = now() - interval '2 minutes' WHERE id = :id", { replacements: { id: made.id } });
    expect(await adoptLapsed(s.podB.ctx), 'the other pod takes it').to.equal(1);
    const done = await ended(s.client, made.id);
    expect(done.status).to.equal('completed');
    expect(done.id).to.equal(made.id);
    expect(done.output.map((i) => i.type)).to.deep.equal(['web_search_call', 'message']);
    expect(entries(), 'two turns more').to.have.length(4);
    await usageSettled();
    const billed = await UsageEvent.findAll({ where: { orgId: s.o.org.id, requestId: [requestId, `${requestId}.t1`, `${requestId}.r1`, `${requestId}.r1.t1`] } });
    expect(billed.map((e) => e.requestId).sort(), 'the first run’s answered turn, and the resumed run’s two').to.deep.equal([requestId, `${requestId}.r1`, `${requestId}.r1.t1`]);
    const searches = await SearchUsage.findAll({ where: { orgId: s.o.org.id, requestId: [`${requestId}.search1`, `${requestId}.r1.search1`] } });
    expect(searches.map((e) => e.requestId).sort(), 'each run’s search').to.deep.equal([`${requestId}.r1.search1`, `${requestId}.search1`]);
    expect(await waitFor(async () => (await rows(`${requestId}.r1`)).length === 1, 10_000), 'the resumed request’s Activity row').to.equal(true);
    expect((await rows(`${requestId}.r1`))[0].status).to.equal(200);
  });
});
