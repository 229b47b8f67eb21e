import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { roomInMinute } from '../../helpers/wait';
import { hitsByUpstream, poolModel, simDeployment } from '../../helpers/pool-models';

/** A deployment's tpm counts what its attempts used: one refused before answering gives its estimate back. */
describe('pools: a failed attempt gives its estimated tokens back to the deployment', () => {
  beforeEach(resetSim);
  afterEach(() => env().sim.knobs.reset());

  it('three attempts the upstream refused (400) leave the tpm minute as it was: the fourth still goes to the preferred deployment', async function () {
    this.timeout(30_000);
    expect(await roomInMinute(), 'room in the minute').to.equal(true);
    const a = simDeployment('a', { priority: 0, tpm: 300 });
    const b = simDeployment('b', { priority: 1 });
    const model = await poolModel([a, b]);
    const o = await buildOrg(env().redis);
    const chat = () => call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] } });
    env().sim.knobs.set(a.upstream, { status: 400, statusTimes: 3 });
    for (let i = 0; i < 3; i++) expect((await chat()).status, 'refused by a, answered as it is').to.equal(400);
    const served = await chat();
    expect(served.status, served.text).to.equal(200);
    expect(hitsByUpstream().get(a.upstream), 'each estimate (about 110 tokens) came back: a is under its 300').to.equal(4);
    expect(hitsByUpstream().get(b.upstream) ?? 0).to.equal(0);
  });
});
