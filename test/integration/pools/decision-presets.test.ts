import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { poolModel, rndId } from '../../helpers/pool-models';
import { decide, validBody } from '../systemone/helpers';
import { Model } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { upsertProvider } from '../../../shared/catalog/catalog-ops';

const LIMITS = { max_state_bytes: 10_000, max_request_bytes: 100_000, max_questions: 8, max_input_tokens: 10_000 };

/** Provider presets (docs/providers/presets.md) on a decision model's deployments, applied as chat applies them. */
describe('model pools: presets of decision deployments', () => {
  let o: TestOrg;
  const made: string[] = [];
  const providers: Record<'groq' | 'mistral' | 'deepseek', string> = { groq: '', mistral: '', deepseek: '' };
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis, { policies: { systemone: 'included' } });
    for (const preset of Object.keys(providers) as Array<keyof typeof providers>) {
      providers[preset] = `decide-${preset}-${rndId()}`;
      await upsertProvider({ name: providers[preset], kind: 'openai', preset, base_url: `${env().simUrl}/v1`, api_key: `${preset}-key` });
    }
  });
  after(async () => {
    await Model.destroy({ where: { publicId: made } });
    await bumpEpoch(env().redis);
  });

  it('log-probabilities are not asked of a service whose preset refuses them (groq, mistral): the noul answer is the stated probability; a preset that takes them (deepseek) gets them', async function () {
    this.timeout(30_000);
    const deployments = (Object.keys(providers) as Array<keyof typeof providers>).map((p) => ({ name: p, provider: providers[p], upstream: `${p}-${rndId()}` }));
    const model = await poolModel(deployments, { capabilities: { decision: true }, limits: LIMITS });
    made.push(model);
    const nouls = new Map<string, number>();
    for (let i = 0; i < 40 && nouls.size < 3; i++) {
      const r = await decide(o.key, validBody({ model }));
      expect(r.status, r.text).to.equal(200);
      nouls.set(r.headers.get('x-service-deployment')!, r.body.answers.paid.noul);
    }
    expect([...nouls.keys()].sort(), 'each deployment served').to.deep.equal(['deepseek', 'groq', 'mistral']);
    for (const d of deployments) {
      const sent = env().sim.log.entries.find((e) => e.model === d.upstream)!.body as Record<string, unknown>;
      expect((sent.response_format as { type: string }).type, d.name).to.equal('json_schema');
      expect([sent.temperature, typeof sent.max_tokens], d.name).to.deep.equal([0, 'number']);
      if (d.name === 'deepseek') expect([sent.logprobs, sent.top_logprobs], d.name).to.deep.equal([true, 5]);
      else expect(Object.keys(sent), d.name).to.not.include.members(['logprobs', 'top_logprobs']);
    }
    // the simulator states its probability to one decimal; from log-probabilities it is finer
    for (const name of ['groq', 'mistral']) expect(Math.round(nouls.get(name)! * 10) / 10, name).to.equal(nouls.get(name));
    expect(Math.round(nouls.get('deepseek')! * 10) / 10, 'deepseek: from the log-probabilities').to.not.equal(nouls.get('deepseek'));
  });
});
