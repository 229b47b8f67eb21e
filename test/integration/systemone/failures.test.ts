import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { upsertModel } from '../../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { credit } from '../../../shared/billing/wallet';
import { db } from '../../../shared/db/sequelize';
import { CreditReservation } from '../../../shared/db/models';
import { waitFor } from '../../helpers/wait';
import { decide, expectRefused, requestIdOf, validBody, walletOf } from './helpers';

/** Runs `fn` with a table renamed away (a real Postgres failure for that table), then restores it. */
async function withoutTable<T>(table: string, fn: () => Promise<T>): Promise<T> {
  await db().query(`ALTER TABLE ${table} RENAME TO ${table}_away`);
  try {
    return await fn();
  } finally {
    await db().query(`ALTER TABLE ${table}_away RENAME TO ${table}`);
  }
}

describe('POST /v1/systemone: upstream failures, capacity, deadlines and outages', () => {
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis, { policies: { systemone: 'metered' } });
    await credit(o.org.id, 5_000_000);
    await upsertModel({
      id: 'sim-decide-capped',
      provider: 'simulator',
      upstream: 'sim-chat-1',
      capabilities: { decision: true },
      max_output_tokens: 6,
      limits: { max_state_bytes: 10_000, max_request_bytes: 100_000, max_questions: 8, max_input_tokens: 10_000 },
      prices: { input_token: 0.5 },
    });
    await bumpEpoch(env().redis);
  });

  afterEach(async () => {
    expect((await walletOf(o.org.id)).reserved, 'no reservation left held').to.equal(0);
  });

  const failing: Array<[string, Record<string, unknown>]> = [
    ['an upstream 500', { status: 500 }],
    ['an upstream 503 that persists', { status: 503, retryAfter: 0 }],
    ['a malformed upstream body', { malformed: true }],
    ['an answer that is not JSON', { badDecision: 'not_json' }],
    ['an answer of the wrong shape', { badDecision: 'wrong_shape' }],
  ];
  for (const [name, knobs] of failing) {
    it(`502 systemone_backend_error for ${name}, nothing charged`, async () => {
      env().sim.knobs.set('sim-chat-1', knobs);
      const before = await walletOf(o.org.id);
      await expectRefused(await decide(o.key, validBody()), 502, 'systemone_backend_error');
      expect(await walletOf(o.org.id)).to.deep.equal(before);
    });
  }

  it('502 systemone_backend_error when the answer is cut at the output cap', async () => {
    const r = await decide(o.key, validBody({ model: 'sim-decide-capped' }));
    await expectRefused(r, 502, 'systemone_backend_error');
    expect(r.body.error.message).to.match(/output cap/);
    expect((env().sim.log.entries[0].body as { max_tokens: number }).max_tokens).to.equal(6);
  });

  it('429 systemone_backend_busy with Retry-After when the upstream rate-limits', async () => {
    env().sim.knobs.set('sim-chat-1', { status: 429, retryAfter: 30 });
    const r = await decide(o.key, validBody());
    await expectRefused(r, 429, 'systemone_backend_busy');
    expect(r.headers.get('retry-after')).to.equal('30');
  });

  it('429 systemone_gate_busy with Retry-After when the org is at its lane count', async () => {
    const one = await buildOrg(env().redis, { policies: { systemone: 'included' }, laneOverrides: { 'systemone:interactive': 1 } });
    env().sim.knobs.set('sim-chat-1', { hold: true }); // the first request answers when released
    const first = decide(one.key, validBody());
    expect(await waitFor(async () => (await env().gw.ctx.leases.count(one.org.id, 'systemone', 'interactive')) === 1, 10_000)).to.equal(true);
    const second = await decide(one.key, validBody());
    await expectRefused(second, 429, 'systemone_gate_busy');
    expect(Number(second.headers.get('retry-after'))).to.be.at.least(1);
    env().sim.knobs.release();
    expect((await first).status).to.equal(200);
    expect(env().sim.log.entries).to.have.length(1);
  });

  it('504 systemone_deadline_exceeded when the upstream hangs past the deadline; the hold is released', async function () {
    this.timeout(20_000);
    env().sim.knobs.set('sim-chat-1', { hang: true });
    const r = await decide(o.key, validBody());
    await expectRefused(r, 504, 'systemone_deadline_exceeded');
    const res = await CreditReservation.findOne({ where: { requestId: requestIdOf(r) } });
    expect(res!.state).to.equal('released');
    expect(await waitFor(() => env().sim.log.entries[0]?.aborted === true, 5000), 'upstream call aborted').to.equal(true);
  });

  it('503 systemone_billing_unavailable for a metered model without an input_token price: never served unbilled', async () => {
    await upsertModel({
      id: 'sim-decide-unpriced',
      provider: 'simulator',
      upstream: 'sim-chat-1',
      capabilities: { decision: true },
      limits: { max_state_bytes: 10_000, max_request_bytes: 100_000, max_questions: 8, max_input_tokens: 10_000 },
    });
    await bumpEpoch(env().redis);
    const before = await walletOf(o.org.id);
    const r = await decide(o.key, validBody({ model: 'sim-decide-unpriced' }));
    await expectRefused(r, 503, 'systemone_billing_unavailable');
    expect(r.headers.get('retry-after'), 'a retryable 503').to.be.a('string');
    expect(await CreditReservation.count({ where: { requestId: requestIdOf(r) } }), 'no reservation').to.equal(0);
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await walletOf(o.org.id)).to.deep.equal(before);
    // An included org is not billed, so the missing price does not stop it.
    const included = await buildOrg(env().redis, { policies: { systemone: 'included' } });
    const ok = await decide(included.key, validBody({ model: 'sim-decide-unpriced' }));
    expect(ok.status, ok.text).to.equal(200);
  });

  it('503 systemone_models_unavailable when the catalog cannot be read', async () => {
    const r = await withoutTable('models', async () => {
      env().gw.ctx.catalog.invalidate();
      return decide(o.key, validBody());
    });
    env().gw.ctx.catalog.invalidate();
    await expectRefused(r, 503, 'systemone_models_unavailable');
    expect(r.headers.get('retry-after')).to.be.a('string');
    const ok = await decide(o.key, validBody());
    expect(ok.status, ok.text).to.equal(200);
  });

  it('503 systemone_billing_unavailable when the wallet cannot be read (metered), while included orgs still answer', async () => {
    const included = await buildOrg(env().redis, { policies: { systemone: 'included' } });
    const [metered, free] = await withoutTable('wallets', async () => [await decide(o.key, validBody()), await decide(included.key, validBody())]);
    await expectRefused(metered, 503, 'systemone_billing_unavailable');
    expect(metered.headers.get('retry-after'), 'a retryable 503').to.be.a('string');
    expect(free.status, free.text).to.equal(200);
    expect(env().sim.log.entries).to.have.length(1);
  });
});
