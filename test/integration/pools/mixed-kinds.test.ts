import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { hitsByUpstream, poolModel, rndId, simDeployment } from '../../helpers/pool-models';
import { upsertProvider } from '../../../shared/catalog/catalog-ops';

const chat = (key: string, model: string, extra: Record<string, unknown> = {}) =>
  call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model, messages: [{ role: 'user', content: 'mixed kinds' }], ...extra } });

/** A pool may mix provider kinds; a kind whose adapter cannot express the request is not drawn for it. */
describe('model pools: deployments of a kind that cannot express the request', () => {
  let o: TestOrg;
  let gm: { name: string; provider: string; upstream: string };
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 64 } });
    const provider = `gemini-${rndId()}`;
    await upsertProvider({ name: provider, kind: 'gemini', base_url: env().simUrl, api_key: 'gm-test-platform-key' } as never);
    gm = { name: 'gm', provider, upstream: 'sim-gemini-1' };
  });

  it('serves a request only Gemini refuses (logprobs) from the OpenAI deployment of a mixed pool, every time', async () => {
    const oa = simDeployment('oa');
    const model = await poolModel([oa, gm]);
    const replies = await Promise.all(Array.from({ length: 12 }, () => chat(o.key, model, { logprobs: true })));
    for (const r of replies) {
      expect(r.status, r.text).to.equal(200);
      expect(r.headers.get('x-service-deployment')).to.equal('oa');
    }
    expect(hitsByUpstream().get(gm.upstream) ?? 0).to.equal(0);
  });

  for (const [what, extra] of [
    ['a tool of a type other than function', { tools: [{ type: 'custom', custom: { name: 'grep' } }] }],
    ['a reasoning_effort without a Gemini thinking budget', { reasoning_effort: 'extreme' }],
  ] as const) {
    it(`serves ${what} (Gemini refuses it) from the OpenAI deployment of a mixed pool, every time`, async () => {
      const oa = simDeployment('oa');
      const model = await poolModel([oa, gm]);
      const replies = await Promise.all(Array.from({ length: 12 }, () => chat(o.key, model, extra)));
      for (const r of replies) {
        expect(r.status, r.text).to.equal(200);
        expect(r.headers.get('x-service-deployment')).to.equal('oa');
      }
      expect(hitsByUpstream().get(gm.upstream) ?? 0).to.equal(0);
    });
  }

  it('skips a fallback whose deployments all refuse the request: the primary’s failure is answered, not a 400', async () => {
    const down = simDeployment('down');
    const fallback = await poolModel([gm]);
    const model = await poolModel([down], { fallbacks: [fallback] });
    env().sim.knobs.set(down.upstream, { status: 503 });
    const r = await chat(o.key, model, { logprobs: true });
    expect(r.status, r.text).to.equal(503);
    expect(r.body.error.code).to.equal('upstream_unavailable');
    expect(r.headers.get('x-service-fallback-model')).to.equal(null);
    expect(hitsByUpstream().get(gm.upstream) ?? 0).to.equal(0);
  });

  it('answers the refusal (400 unsupported_parameter) when no deployment of the pool can express the request', async () => {
    const model = await poolModel([gm]);
    const r = await chat(o.key, model, { logprobs: true });
    expect(r.status, r.text).to.equal(400);
    expect(r.body.error.code).to.equal('unsupported_parameter');
    expect(r.body.error.param).to.equal('logprobs');
  });
});
