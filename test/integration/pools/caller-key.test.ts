import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { upsertProvider } from '../../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { poolModel, rndId, poolStateOf } from '../../helpers/pool-models';

/**
 * A caller's own upstream key (passthrough) says nothing about a shared deployment under the
 * platform's credential: its 429 (however long the wait it names) cools nothing down for other orgs.
 */
describe("pools: a caller's own key leaves the shared deployments' health alone", () => {
  beforeEach(resetSim);
  afterEach(() => env().sim.knobs.reset());

  for (const kind of ['gemini', 'openai'] as const) {
    it(`${kind}: a passthrough key's 429 asking for an hour, then another org is served at once`, async function () {
      this.timeout(30_000);
      const prov = `own-key-${kind}-${rndId()}`;
      await upsertProvider({ name: prov, kind, base_url: kind === 'gemini' ? env().simUrl : `${env().simUrl}/v1`, api_key: 'platform-key', passthrough: true } as never);
      await bumpEpoch(env().redis);
      const a = `sim-${kind}-a-${rndId()}`;
      const b = `sim-${kind}-b-${rndId()}`;
      const model = await poolModel([{ name: 'a', provider: prov, upstream: a }, { name: 'b', provider: prov, upstream: b }]);
      const [caller, other] = [await buildOrg(env().redis), await buildOrg(env().redis)];
      env().sim.knobs.set(a, { status: 429, retryAfter: 3600 });
      env().sim.knobs.set(b, { status: 429, retryAfter: 3600 });
      const own = kind === 'gemini' ? 'AIza-exhausted-own-key' : 'sk-exhausted-own-key';
      const r1 = await call('POST', '/v1/chat/completions', { headers: { ...keyHeader(caller.key), authorization: `Bearer ${own}` }, json: { model, messages: [{ role: 'user', content: 'x' }] } });
      expect(r1.status, r1.text).to.equal(429);
      const state = await poolStateOf(model, ['a', 'b']);
      expect(JSON.stringify(state), 'no deployment cooling').to.not.match(/"coolingForMs":[1-9]/);
      env().sim.knobs.reset();
      resetSim();
      const r2 = await call('POST', '/v1/chat/completions', { headers: keyHeader(other.key), json: { model, messages: [{ role: 'user', content: 'x' }] } });
      expect(r2.status, r2.text).to.equal(200);
      expect(env().sim.log.entries.length).to.equal(1);
    });
  }
});
