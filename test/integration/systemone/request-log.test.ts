import { expect } from 'chai';
import { QueryTypes } from 'sequelize';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { poolModel, rndId } from '../../helpers/pool-models';
import { usageSettled } from '../../helpers/usage';
import { db } from '../../../shared/db/sequelize';
import { Model } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { credit } from '../../../shared/billing/wallet';
import { upsertProvider } from '../../../shared/catalog/catalog-ops';
import { decide, requestIdOf, validBody, walletOf } from './helpers';

const PRICE = 0.5; // sim-decide: micro-dollars per input token

/** A decision's request log row (the Activity page's) once the outbox is drained. */
async function logRow(requestId: string): Promise<Record<string, unknown>> {
  await usageSettled();
  const rows = await db().query<Record<string, unknown>>('SELECT status, cached_tokens, reasoning_tokens FROM request_logs WHERE request_id = :requestId', { type: QueryTypes.SELECT, replacements: { requestId } });
  expect(rows, requestId).to.have.length(1);
  return rows[0];
}

/**
 * A decision's request log row carries the cached and reasoning tokens its upstream reports, as a chat
 * job's does (chat's `prompt_tokens_details.cached_tokens`, `completion_tokens_details.reasoning_tokens`;
 * a preset's own cached-token field read as chat reads it); the charge stays on input tokens.
 */
describe('POST /v1/systemone: cached and reasoning tokens on the request log row', function () {
  this.timeout(30_000);
  let o: TestOrg;
  const made: string[] = [];
  beforeEach(resetSim);
  afterEach(() => env().sim.knobs.reset());
  before(async () => {
    o = await buildOrg(env().redis, { policies: { systemone: 'metered' } });
    await credit(o.org.id, 1_000_000);
  });
  after(async () => {
    await Model.destroy({ where: { publicId: made } });
    await bumpEpoch(env().redis);
  });

  it("an upstream reporting prompt_tokens_details.cached_tokens and reasoning tokens: both on the row; billed on input tokens as before; none reported: null", async () => {
    env().sim.knobs.set('sim-chat-1', { usageExtra: { prompt_tokens_details: { cached_tokens: 9 }, completion_tokens_details: { reasoning_tokens: 4 } } });
    const before = await walletOf(o.org.id);
    const r = await decide(o.key, validBody());
    expect(r.status, r.text).to.equal(200);
    expect(await logRow(requestIdOf(r))).to.deep.equal({ status: 200, cached_tokens: 9, reasoning_tokens: 4 });
    expect(before.balance - (await walletOf(o.org.id)).balance, 'charged for input tokens, cached ones included').to.equal(Math.ceil(r.body.usage.input_tokens * PRICE));

    env().sim.knobs.reset();
    const plain = await decide(o.key, validBody());
    expect(plain.status, plain.text).to.equal(200);
    expect(await logRow(requestIdOf(plain))).to.deep.equal({ status: 200, cached_tokens: null, reasoning_tokens: null });
  });

  it("a deepseek deployment's prompt_cache_hit_tokens (the preset's cached-token field) on the row", async () => {
    const provider = `decide-deepseek-${rndId()}`;
    await upsertProvider({ name: provider, kind: 'openai', preset: 'deepseek', base_url: `${env().simUrl}/v1`, api_key: 'deepseek-key' });
    const upstream = `deepseek-${rndId()}`;
    const model = await poolModel([{ name: 'deepseek', provider, upstream }], { capabilities: { decision: true }, limits: { max_state_bytes: 10_000, max_request_bytes: 100_000, max_questions: 8, max_input_tokens: 10_000 } });
    made.push(model);
    env().sim.knobs.set(upstream, { usageExtra: { prompt_cache_hit_tokens: 7 } });
    const r = await decide(o.key, validBody({ model }));
    expect(r.status, r.text).to.equal(200);
    expect(await logRow(requestIdOf(r))).to.deep.equal({ status: 200, cached_tokens: 7, reasoning_tokens: null });
  });
});
