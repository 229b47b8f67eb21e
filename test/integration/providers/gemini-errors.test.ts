import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { useGeminiModels, GEMINI_KEY } from '../../helpers/gemini-model';

const chat = { model: 'test-gemini', messages: [{ role: 'user', content: 'x' }] };

/**
 * Gemini's error bodies as Google sends them (the simulator's Gemini route): the wait of a 429 only
 * in RetryInfo, an invalid key as 400 INVALID_ARGUMENT with reason API_KEY_INVALID.
 */
describe('provider kind gemini: what Google says in its error bodies', () => {
  let o: TestOrg;
  beforeEach(resetSim);
  useGeminiModels();
  before(async () => {
    o = await buildOrg(env().redis);
  });

  it('a 429 whose RetryInfo asks for 53 s is answered at once with Retry-After 53, after one upstream call', async () => {
    env().sim.knobs.set('sim-gemini-1', { status: 429, retryAfter: 53 });
    const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: chat });
    expect(r.status, r.text).to.equal(429);
    expect(r.body.error.code).to.equal('upstream_rate_limited');
    expect(r.headers.get('retry-after')).to.equal('53');
    expect(env().sim.log.entries, 'no retry inside the 53 s Google asked for').to.have.length(1);
  });

  it('an invalid platform key (400 API_KEY_INVALID) is 502 upstream_auth_failed, JSON and streamed, without Google’s message', async () => {
    env().sim.knobs.set('sim-gemini-1', { keyInvalid: true });
    for (const stream of [false, true]) {
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { ...chat, stream } });
      expect(r.status, r.text).to.equal(502);
      expect(r.body.error.code).to.equal('upstream_auth_failed');
      expect(r.text).to.include('not about your API key').and.not.include('API key not valid').and.not.include(GEMINI_KEY);
    }
  });

  it("the caller's own key refused the same way is the caller's 401 upstream_auth_failed, with Google's message", async () => {
    env().sim.knobs.set('sim-gemini-1', { keyInvalid: true });
    const r = await call('POST', '/v1/chat/completions', { headers: { ...keyHeader(o.key), authorization: 'Bearer AIza-callers-own' }, json: chat });
    expect(r.status, r.text).to.equal(401);
    expect(r.body.error.code).to.equal('upstream_auth_failed');
    expect(r.body.error.message).to.equal('Upstream refused your key: API key not valid. Please pass a valid API key.');
  });
});
