import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { requestRowsOf } from '../../helpers/usage';
import { startSearchUpstream, useSearchProvider, type SearchUpstream } from '../../helpers/search-upstream';
import { Model } from '../../../shared/db/models';

/**
 * A native search request (the gateway runs Anthropic's web_search tool: several model turns and
 * searches, each a job billed by its own usage event) has one request log row, under the client's
 * request id, with every turn's tokens and cost, every search, the total latency and the status the
 * client was answered (docs/observability.md).
 */
const V = { 'anthropic-version': '2023-06-01' };
const SEARCH = { type: 'web_search_20250305', name: 'web_search' } as const;
type Row = Record<string, unknown>;

async function chatCost(input: number, output: number): Promise<number> {
  const p = ((await Model.findOne({ where: { publicId: 'sim-chat' } }))!.prices ?? {}) as Record<string, number>;
  return input * (p.input_token ?? 0) + output * (p.output_token ?? 0);
}

/** The tokens and searches the usage events of the request's turns and searches billed. */
function billed(events: Row[]) {
  const turns = events.filter((e) => e.modality !== 'web_search');
  return {
    turns: turns.length,
    input: turns.reduce((n, e) => n + Number(e.input_tokens), 0),
    output: turns.reduce((n, e) => n + Number(e.output_tokens), 0),
    searches: events.filter((e) => e.modality === 'web_search').length,
  };
}

describe('request log: a native search request is one row with its totals', () => {
  let up: SearchUpstream;
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    up = await startSearchUpstream();
    o = await buildOrg(env().redis);
    await useSearchProvider(o.org.id, up, 'log-native-search');
  });
  after(() => up.close());

  const ask = () => call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), ...V },
    json: { model: 'sim-chat', max_tokens: 300, tools: [SEARCH], messages: [{ role: 'user', content: 'search for honey bees' }] } });

  it('a success: one row, every turn billed and counted in it', async () => {
    const t0 = Date.now();
    const r = await ask();
    const took = Date.now() - t0;
    expect(r.status).to.equal(200);
    const rid = r.headers.get('x-service-request-id')!;
    const { rows, events } = await requestRowsOf(rid);
    expect(rows.map((x) => x.request_id)).to.deep.equal([rid]);
    const b = billed(events);
    expect(b.turns, 'model turns billed').to.be.at.least(2);
    expect(b.searches, 'searches billed').to.be.at.least(1);
    const row = rows[0];
    expect(row).to.include({ status: 200, error_code: null, model: 'sim-chat', lane: 'interactive', input_tokens: b.input, output_tokens: b.output });
    expect(r.body.usage).to.include({ input_tokens: b.input, output_tokens: b.output });
    expect((row.units as Record<string, number>).web_search_requests).to.equal(b.searches);
    expect(Number(row.cost_micros)).to.equal(await chatCost(b.input, b.output));
    expect(Number(row.total_ms)).to.be.within(0, took + 5);
    expect(row.lane_ms).to.not.equal(null);
  });

  it('a later turn that fails: the row says what the client was answered, with the billed turn', async () => {
    env().sim.knobs.set('*', { status: 400, statusEvery: 2 });
    const r = await ask();
    expect(r.status).to.equal(400);
    expect(r.body.error.type).to.equal('invalid_request_error');
    const rid = r.headers.get('x-service-request-id')!;
    const { rows, events } = await requestRowsOf(rid);
    expect(rows.map((x) => x.request_id)).to.deep.equal([rid]);
    const b = billed(events);
    expect(b.turns, 'the first turn was billed').to.equal(1);
    expect(rows[0]).to.include({ status: 400, error_code: 'upstream_invalid_request', input_tokens: b.input, output_tokens: b.output });
    expect(b.input).to.be.greaterThan(0);
  });
});
