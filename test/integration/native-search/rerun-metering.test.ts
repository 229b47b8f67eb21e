import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { requestRowsOf } from '../../helpers/usage';
import { startSearchUpstream, useSearchProvider, type SearchUpstream } from '../../helpers/search-upstream';
import { startPageHost, type PageHost } from '../../helpers/https-pages';

/** The request's log rows, and the usage events of its searches and fetches (`<rid>.searchN`, `<rid>.fetchN`). */
async function rowsOf(rid: string): Promise<{ rows: Array<Record<string, unknown>>; searches: Array<Record<string, unknown>> }> {
  const { rows, events } = await requestRowsOf(rid);
  return { rows, searches: events.filter((e) => e.modality === 'web_search') };
}

/**
 * A follow-up whose echoed searches come back without their results (no `encrypted_content`) has
 * them searched again on the rails: each re-run is a search job with its usage event (billed) and a
 * ledger row, and the request's one log row counts it in `units.web_search_requests` with the
 * model's own searches, in the responses dialect as in messages (docs/observability.md).
 */
describe('native search: re-runs are metered on the request row', function () {
  this.timeout(30_000);
  let up: SearchUpstream;
  let pages: PageHost;
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    [up, pages, o] = await Promise.all([startSearchUpstream(), startPageHost('127.0.0.2'), buildOrg(env().redis)]);
    await useSearchProvider(o.org.id, up, 'rerun-metering');
  });
  after(() => Promise.all([up.close(), pages.close()]));

  const openai = () => new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  const bare = (i: number) => ({ type: 'web_search_call', id: `ws_old${i}`, status: 'completed', action: { type: 'search', query: `old ${i}` } });

  for (const stream of [false, true]) {
    it(`responses${stream ? ' (streamed)' : ''}: two re-runs and the model's own search: three searches billed and on the row`, async () => {
      const queries = up.queries.length;
      const input = [{ role: 'user', content: 'tell me about bees' }, bare(1), bare(2), { role: 'user', content: 'now search for wasps' }] as never[];
      const params = { model: 'sim-chat', tools: [{ type: 'web_search' as const }], store: false, input };
      const { response } = stream
        ? await openai().responses.create({ ...params, stream: true }).withResponse()
        : await openai().responses.create(params).withResponse();
      if (stream) await response.text();
      expect(up.queries.slice(queries)).to.deep.equal(['old 1', 'old 2', 'wasps']);
      const rid = response.headers.get('x-service-request-id')!;
      const { rows, searches } = await rowsOf(rid);
      expect(searches, 'each search has its usage event').to.have.length(3);
      expect(rows.map((r) => r.request_id)).to.deep.equal([rid]);
      expect((rows[0].units as Record<string, number>).web_search_requests).to.equal(3);
    });
  }

  it('responses: a re-run page (open_page) is a fetch on the row', async () => {
    const page = { type: 'web_search_call', id: 'ws_page', status: 'completed', action: { type: 'open_page', url: `https://127.0.0.2:${pages.port}/article` } };
    const input = [{ role: 'user', content: 'tell me about bees' }, page, { role: 'user', content: 'thanks, summarise it' }] as never[];
    const { response } = await openai().responses.create({ model: 'sim-chat', tools: [{ type: 'web_search' }], store: false, input }).withResponse();
    const rid = response.headers.get('x-service-request-id')!;
    const { rows, searches } = await rowsOf(rid);
    expect(searches, 'the fetch job billed').to.have.length(1);
    const units = rows[0].units as Record<string, number>;
    expect(units.web_search_requests ?? 0).to.equal(0);
    expect(units.web_fetch_requests).to.equal(1);
  });

  it('messages: a re-run is in server_tool_use and on the row', async () => {
    const anthropic = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
    const old = [
      { type: 'server_tool_use', id: 'srvtoolu_old1', name: 'web_search', input: { query: 'old 1' } },
      { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_old1', content: [{ type: 'web_search_result', url: 'https://docs.example.org/old/1', title: 'T', encrypted_content: '', page_age: null }] },
    ];
    const { data, response } = await anthropic.messages
      .create({ model: 'sim-chat', max_tokens: 300, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'bees' }, { role: 'assistant', content: old as never }, { role: 'user', content: 'thanks, summarise it' }] })
      .withResponse();
    expect(data.usage.server_tool_use?.web_search_requests).to.equal(1);
    const { rows, searches } = await rowsOf(response.headers.get('x-service-request-id')!);
    expect(searches).to.have.length(1);
    expect((rows[0].units as Record<string, number>).web_search_requests).to.equal(1);
  });
});
