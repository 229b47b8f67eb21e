import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { poolsWithSettings } from '../../helpers/pools';
import { hitsByUpstream, poolModel, rndId, simDeployment } from '../../helpers/pool-models';
import { upsertProvider } from '../../../shared/catalog/catalog-ops';
import { seedBedrock } from './bedrock-setup';
import type { DeploymentSpec } from '../../../shared/catalog/deployments';

/**
 * Gemini and Bedrock deployments follow the pool's rules like every kind (docs/routing.md): no
 * response headers within POOL_FIRST_BYTE_TIMEOUT_MS is a retryable failure, and the router alone
 * retries (one upstream call per attempt).
 */
describe('model pools: gemini and bedrock deployments keep the first-byte limit and the router’s retries', () => {
  let o: TestOrg;
  let gemini: string;
  poolsWithSettings({ POOL_FIRST_BYTE_TIMEOUT_MS: '400' });
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    gemini = `gemini-pool-${rndId()}`;
    await upsertProvider({ name: gemini, kind: 'gemini', base_url: env().simUrl, api_key: 'gm-pool-key' });
    await seedBedrock();
  });

  const chat = (model: string) => call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages: [{ role: 'user', content: 'pool rules' }] } });
  const stuckOn = (provider: string): DeploymentSpec => ({ name: 'stuck', provider, upstream: `stuck-${rndId()}`, priority: 0 });

  for (const kind of ['gemini', 'bedrock'] as const) {
    it(`${kind}: a deployment that sends no headers within the limit fails over to the next one, with one upstream call`, async function () {
      this.timeout(20_000);
      const stuck = stuckOn(kind === 'gemini' ? gemini : 'bedrock-sim');
      const ok = simDeployment('ok', { priority: 1 });
      const model = await poolModel([stuck, ok]);
      env().sim.knobs.set(stuck.upstream, { hang: true });
      const t = Date.now();
      const r = await chat(model);
      expect(r.status, r.text).to.equal(200);
      expect(r.headers.get('x-service-deployment')).to.equal('ok');
      expect(r.headers.get('x-service-attempts')).to.equal('2');
      expect(Date.now() - t, 'the limit, not the upstream, ended the attempt').to.be.below(5000);
      expect(hitsByUpstream().get(stuck.upstream)).to.equal(1);
    });
  }

  it('gemini: a 503 is one upstream call per router attempt (no retries of its own inside the attempt)', async () => {
    const sick = stuckOn(gemini);
    const ok = simDeployment('ok', { priority: 1 });
    const model = await poolModel([sick, ok]);
    env().sim.knobs.set(sick.upstream, { status: 503 });
    const r = await chat(model);
    expect(r.status, r.text).to.equal(200);
    expect(r.headers.get('x-service-deployment')).to.equal('ok');
    expect(hitsByUpstream().get(sick.upstream)).to.equal(1);
  });
});
