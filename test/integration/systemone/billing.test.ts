import { expect } from 'chai';
import crypto from 'crypto';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { CreditReservation, Organization, Plan, UsageEvent } from '../../../shared/db/models';
import { seed, DEMO_ORG_SLUG } from '../../../shared/db/seed';
import { credit, release, reserve, settle } from '../../../shared/billing/wallet';
import { ApiError } from '../../../shared/errors/ApiError';
import { decide, expectRefused, requestIdOf, validBody, walletOf } from './helpers';
import { usageSettled } from '../../helpers/usage';

const PRICE = 0.5; // sim-decide: micro-dollars per input token

describe('POST /v1/systemone: policy and wallet', () => {
  beforeEach(resetSim);

  describe('policy', () => {
    it('403 systemone_policy_disabled when the org policy is off', async () => {
      const o = await buildOrg(env().redis, { policies: { systemone: 'off' } });
      await expectRefused(await decide(o.key, validBody()), 403, 'systemone_policy_disabled');
      expect(env().sim.log.entries).to.have.length(0);
    });

    it('takes the plan policy when the org has none, and the org policy overrides the plan', async () => {
      const name = `plan-${crypto.randomBytes(4).toString('hex')}`;
      await Plan.create({ name, laneLimits: {}, entitlements: { policies: { systemone: 'off' } } });
      const planOff = await buildOrg(env().redis, { plan: name });
      await expectRefused(await decide(planOff.key, validBody()), 403, 'systemone_policy_disabled');
      const overridden = await buildOrg(env().redis, { plan: name, policies: { systemone: 'included' } });
      const r = await decide(overridden.key, validBody());
      expect(r.status, r.text).to.equal(200);
    });

    it('included orgs are never charged, even with a wallet, and need none', async () => {
      const noWallet = await buildOrg(env().redis, { policies: { systemone: 'included' } });
      const withWallet = await buildOrg(env().redis, { policies: { systemone: 'included' } });
      await credit(withWallet.org.id, 1000);
      const ids: string[] = [];
      for (const o of [noWallet, withWallet, withWallet]) {
        const r = await decide(o.key, validBody());
        expect(r.status, r.text).to.equal(200);
        ids.push(requestIdOf(r));
      }
      expect(await walletOf(withWallet.org.id)).to.deep.equal({ balance: 1000, reserved: 0 });
      expect(await CreditReservation.count({ where: { orgId: [noWallet.org.id, withWallet.org.id] } })).to.equal(0);
      await usageSettled();
      const events = await UsageEvent.findAll({ where: { requestId: ids } });
      expect(events).to.have.length(3);
      expect(events.every((e) => e.units.billed_micros === 0)).to.equal(true);
    });
  });

  describe('metered', () => {
    let o: TestOrg;
    before(async () => {
      o = await buildOrg(env().redis, { policies: { systemone: 'metered' } });
      await credit(o.org.id, 1_000_000);
    });

    it('reserves before the call and settles on input tokens only (output reported, never billed)', async () => {
      const before = await walletOf(o.org.id);
      const r = await decide(o.key, validBody());
      expect(r.status, r.text).to.equal(200);
      const { input_tokens: input, output_tokens: output } = r.body.usage;
      expect(output).to.be.greaterThan(0);
      const expected = Math.ceil(input * PRICE);
      const after = await walletOf(o.org.id);
      expect(before.balance - after.balance).to.equal(expected);
      expect(after.reserved).to.equal(0);
      const res = await CreditReservation.findOne({ where: { requestId: requestIdOf(r) } });
      expect(res!.state).to.equal('settled');
      expect(Number(res!.settledMicros)).to.equal(expected);
      expect(Number(res!.amountMicros)).to.be.at.least(expected);
      await usageSettled();
      const ev = await UsageEvent.findOne({ where: { requestId: requestIdOf(r) } });
      expect(ev!.units.billed_micros).to.equal(expected);
    });

    it('402 insufficient_credits without a wallet or with too little credit', async () => {
      const broke = await buildOrg(env().redis, { policies: { systemone: 'metered' } });
      await expectRefused(await decide(broke.key, validBody()), 402, 'insufficient_credits');
      await credit(broke.org.id, 10);
      const short = await decide(broke.key, validBody());
      await expectRefused(short, 402, 'insufficient_credits');
      expect(short.body.error.credits_available, 'credits_available').to.equal(10);
      expect(short.body.error.credits_needed, 'credits_needed').to.be.a('number').greaterThan(10);
      expect(await walletOf(broke.org.id)).to.deep.equal({ balance: 10, reserved: 0 });
      expect(env().sim.log.entries).to.have.length(0);
    });

    it('metered is the platform default for an org with no policy anywhere', async () => {
      const plain = await buildOrg(env().redis);
      await expectRefused(await decide(plain.key, validBody()), 402, 'insufficient_credits');
    });

    it('402 reservation_too_large names the org bound as credits_bound', async () => {
      const bounded = await buildOrg(env().redis, { policies: { systemone: 'metered' } });
      await credit(bounded.org.id, 1_000_000, { creditsBound: 50 });
      const r = await decide(bounded.key, validBody());
      await expectRefused(r, 402, 'reservation_too_large');
      expect(r.body.error.credits_bound).to.equal(50);
      expect(await walletOf(bounded.org.id)).to.deep.equal({ balance: 1_000_000, reserved: 0 });
    });

    it('a failed upstream call releases the reservation and charges nothing', async () => {
      env().sim.knobs.set('sim-chat-1', { status: 500 });
      const before = await walletOf(o.org.id);
      const r = await decide(o.key, validBody());
      await expectRefused(r, 502, 'systemone_backend_error');
      const res = await CreditReservation.findOne({ where: { requestId: requestIdOf(r) } });
      expect(res!.state).to.equal('released');
      expect(await walletOf(o.org.id)).to.deep.equal(before);
    });

    it('concurrent metered requests never overdraw the wallet', async function () {
      this.timeout(30_000);
      const tight = await buildOrg(env().redis, { policies: { systemone: 'metered' }, laneOverrides: { 'systemone:interactive': 32 } });
      // Measure one reservation, then fund the wallet for about three of them.
      const probe = await buildOrg(env().redis, { policies: { systemone: 'metered' } });
      await credit(probe.org.id, 1_000_000);
      const p = await decide(probe.key, validBody());
      const hold = Number((await CreditReservation.findOne({ where: { requestId: requestIdOf(p) } }))!.amountMicros);
      const funds = hold * 3 + Math.floor(hold / 2);
      await credit(tight.org.id, funds);
      env().sim.knobs.set('sim-chat-1', { delayMs: 300 });
      const replies = await Promise.all(Array.from({ length: 10 }, () => decide(tight.key, validBody())));
      const ok = replies.filter((r) => r.status === 200);
      const refused = replies.filter((r) => r.status !== 200);
      expect(ok.length).to.be.within(1, 3);
      expect(refused.length).to.equal(10 - ok.length);
      for (const r of refused) await expectRefused(r, 402, 'insufficient_credits');
      const after = await walletOf(tight.org.id);
      expect(after.reserved).to.equal(0);
      expect(after.balance).to.be.at.least(0);
      const settled = await CreditReservation.findAll({ where: { orgId: tight.org.id, state: 'settled' } });
      expect(settled).to.have.length(ok.length);
      const charged = settled.reduce((s, x) => s + Number(x.settledMicros), 0);
      expect(funds - after.balance).to.equal(charged);
    });
  });

  describe('wallet (shared/billing/wallet.ts, real Postgres)', () => {
    it('the seed gives the demo org a funded wallet once (re-seeding does not add credit)', async () => {
      const demo = await Organization.findOne({ where: { slug: DEMO_ORG_SLUG } });
      const before = await walletOf(demo!.id);
      expect(before.balance).to.be.at.least(1);
      await seed(env().redis, env().simUrl);
      expect((await walletOf(demo!.id)).balance).to.equal(before.balance);
    });

    it('lets exactly as many concurrent reservations through as the balance covers', async () => {
      const o = await buildOrg(env().redis);
      await credit(o.org.id, 1000);
      const outcomes = await Promise.allSettled(Array.from({ length: 25 }, (_, i) => reserve(o.org.id, `w-${o.org.id}-${i}`, 100)));
      const granted = outcomes.filter((x) => x.status === 'fulfilled');
      expect(granted).to.have.length(10);
      for (const x of outcomes) if (x.status === 'rejected') expect((x.reason as ApiError).code).to.equal('insufficient_credits');
      expect(await walletOf(o.org.id)).to.deep.equal({ balance: 1000, reserved: 1000 });
      await Promise.all(Array.from({ length: 25 }, (_, i) => release(`w-${o.org.id}-${i}`)));
      expect(await walletOf(o.org.id)).to.deep.equal({ balance: 1000, reserved: 0 });
    });

    it('is idempotent by request id: reserve, settle and release twice act once; settle is capped at the hold', async () => {
      const o = await buildOrg(env().redis);
      await credit(o.org.id, 1000);
      const id = `idem-${o.org.id}`;
      await reserve(o.org.id, id, 300);
      await reserve(o.org.id, id, 300);
      expect(await walletOf(o.org.id)).to.deep.equal({ balance: 1000, reserved: 300 });
      const s1 = await settle(id, 500); // more than was held: capped
      const s2 = await settle(id, 500);
      await release(id);
      expect(s1!.settledMicros).to.equal(300);
      expect(s2!.settledMicros).to.equal(300);
      expect(await walletOf(o.org.id)).to.deep.equal({ balance: 700, reserved: 0 });
      const r = `rel-${o.org.id}`;
      await reserve(o.org.id, r, 100);
      await release(r);
      await settle(r, 100); // after a release: nothing charged
      expect(await walletOf(o.org.id)).to.deep.equal({ balance: 700, reserved: 0 });
    });
  });
});
