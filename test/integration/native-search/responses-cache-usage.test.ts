import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { postSse } from '../../helpers/sse-events';
import { call, keyHeader } from '../../helpers/http';
import { startSearchUpstream, useSearchProvider, type SearchUpstream } from '../../helpers/search-upstream';

/**
 * Hosted web search on /v1/responses: the Response's usage sums every model turn of the search loop,
 * their cache writes (`input_tokens_details.cache_write_tokens`) with their cache reads.
 */
describe('native web search on /v1/responses: cache writes in usage', () => {
  let up: SearchUpstream;
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    up = await startSearchUpstream();
    o = await buildOrg(env().redis);
    await useSearchProvider(o.org.id, up, 'resp-cache-usage-search');
  });
  after(() => up.close());

  it("sim-claude: each turn's cache_creation_input_tokens summed as cache_write_tokens, JSON and streamed", async () => {
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
});
