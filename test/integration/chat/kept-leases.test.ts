import { expect } from 'chai';
import { LeaseManager } from '../../../shared/lanes/leases';
import { keys } from '../../../shared/redis/keys';
import { env } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';

/**
 * LEASE_KEEP_MS: a released lease is kept by its pod for a moment and handed to the org's next
 * request without a Redis round trip; Redis counts it the whole time, so the cap holds across pods.
 * Two LeaseManagers on the suite's Redis play two pods.
 */
describe('lanes: a released lease kept for the org\'s next request', () => {
  const org = () => `kept-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  let podA: LeaseManager;
  let podB: LeaseManager;
  let commands: string[];
  const monitor = () => {
    commands = [];
    const redis = env().redis as unknown as { sendCommand: (c: { name: string }) => unknown };
    const original = redis.sendCommand.bind(redis);
    redis.sendCommand = (c: { name: string }) => {
      commands.push(c.name);
      return original(c);
    };
    return () => (redis.sendCommand = original);
  };

  beforeEach(() => {
    podA = new LeaseManager(env().redis, 30_000, 200);
    podB = new LeaseManager(env().redis, 30_000, 0);
  });
  afterEach(() => {
    podA.stop();
    podB.stop();
  });

  it('hands the kept slot to the next request of the same lane with no Redis command, and frees it after the window', async () => {
    const o = org();
    // a lane count of 2: one slot in use is half of it, room enough for the whole keep window
    const first = await podA.acquire(o, 'chat', 'interactive', 2);
    if (!first.granted) throw new Error('not granted');
    await podA.release(first.lease);
    expect(await podA.count(o, 'chat', 'interactive'), 'kept: still counted in Redis').to.equal(1);

    const restore = monitor();
    let second;
    try {
      second = await podA.acquire(o, 'chat', 'interactive', 2);
    } finally {
      restore();
    }
    expect(second.granted).to.equal(true);
    if (!second.granted) return;
    expect(second.lease.id, 'the same slot').to.equal(first.lease.id);
    expect(commands, 'no round trip for the kept slot').to.deep.equal([]);
    expect(second.lease.startedAt).to.be.at.least(first.lease.startedAt);

    await podA.release(second.lease);
    await podA.release(second.lease); // a second release of the same lease is ignored
    expect(await waitFor(async () => (await podA.count(o, 'chat', 'interactive')) === 0, 3000), 'freed after the keep window').to.equal(true);
    // an old lease object released again does not resurrect its slot
    await podA.release(first.lease);
    expect(await podA.count(o, 'chat', 'interactive')).to.equal(0);
  });

  it('holds the hard cap across pods while a slot is kept, and admits the other pod once it is freed', async () => {
    const o = org();
    // pod A's slot is granted with room (1 of 3), then pod B fills the lane
    const a = await podA.acquire(o, 'chat', 'interactive', 3);
    if (!a.granted) throw new Error('not granted');
    for (let i = 0; i < 2; i++) expect((await podB.acquire(o, 'chat', 'interactive', 3)).granted).to.equal(true);
    await podA.release(a.lease);
    const refused = await podB.acquire(o, 'chat', 'interactive', 3);
    expect(refused.granted, 'the kept slot is still taken for pod B').to.equal(false);
    expect(await waitFor(async () => (await podB.acquire(o, 'chat', 'interactive', 3)).granted, 3000, 20), 'pod B admitted after the window').to.equal(true);
    expect((await podA.acquire(o, 'chat', 'interactive', 3)).granted, 'and pod A is now over the cap').to.equal(false);
  });

  it('near the cap a slot is kept a few ms only (NEAR_CAP_KEEP_MS), however long LEASE_KEEP_MS is: the other pod is not refused for long', async () => {
    const o = org();
    const long = new LeaseManager(env().redis, 30_000, 20_000);
    try {
      // a lane count of 2: the second slot takes the org over half of it
      const a1 = await long.acquire(o, 'chat', 'interactive', 2);
      const a2 = await long.acquire(o, 'chat', 'interactive', 2);
      if (!a1.granted || !a2.granted) throw new Error('not granted');
      await long.release(a2.lease);
      const t = Date.now();
      expect(await waitFor(async () => (await podB.acquire(o, 'chat', 'interactive', 2)).granted, 3000, 2), 'pod B admitted').to.equal(true);
      expect(Date.now() - t, 'within a few ms, not the 20 s keep window').to.be.below(500);
      // the slot with room (1 of 2) is still kept for the long window
      await long.release(a1.lease);
      await new Promise((r) => setTimeout(r, 100));
      expect(await long.count(o, 'chat', 'interactive'), 'pod B\'s slot and the kept one').to.equal(2);
    } finally {
      long.stop();
    }
  });

  it('keeps nothing for another lane or org, and a kept slot does not stretch a lowered cap', async () => {
    const o = org();
    const a1 = await podA.acquire(o, 'chat', 'interactive', 2);
    const a2 = await podA.acquire(o, 'chat', 'interactive', 2);
    if (!a1.granted || !a2.granted) throw new Error('not granted');
    await podA.release(a1.lease);
    // another lane of the same org goes to Redis
    const other = await podA.acquire(o, 'chat', 'background', 1);
    expect(other.granted && other.lease.id).to.not.equal(a1.lease.id);
    // the cap is now 1 and this pod still uses one slot: the kept one is freed, not handed over
    const lowered = await podA.acquire(o, 'chat', 'interactive', 1);
    expect(lowered.granted).to.equal(false);
    expect(await podA.count(o, 'chat', 'interactive'), 'the kept slot was given back').to.equal(1);
  });

  it('gives kept slots back at once when the pod stops', async () => {
    const o = org();
    const long = new LeaseManager(env().redis, 30_000, 20_000);
    const a = await long.acquire(o, 'chat', 'interactive', 5);
    if (!a.granted) throw new Error('not granted');
    await long.release(a.lease);
    expect(await env().redis.zcard(keys.lease(o, 'chat', 'interactive'))).to.equal(1);
    long.stop();
    expect(await waitFor(async () => (await env().redis.zcard(keys.lease(o, 'chat', 'interactive'))) === 0, 2000, 10), 'long before its 20 s keep window').to.equal(true);
  });

  it('an org at its cap is admitted when its kept slot is too old to hand over (the slot is freed in Redis before the acquire)', async function () {
    this.timeout(10_000);
    const o = org();
    // pod A's slot granted with room (1 of 2); pod B takes the other one: the lane is full
    const a = await podA.acquire(o, 'chat', 'interactive', 2);
    if (!a.granted) throw new Error('not granted');
    expect((await podB.acquire(o, 'chat', 'interactive', 2)).granted).to.equal(true);
    await new Promise((r) => setTimeout(r, 900));
    await podA.release(a.lease); // kept: granted 900 ms ago, younger than the 1 s a kept slot may live
    await new Promise((r) => setTimeout(r, 150)); // inside podA's 200 ms keep window, but now older than 1 s
    const next = await podA.acquire(o, 'chat', 'interactive', 2);
    expect(next.granted, 'admitted, not refused by its own stale slot').to.equal(true);
    expect(next.granted && next.lease.id).to.not.equal(a.lease.id);
    expect(await podA.count(o, 'chat', 'interactive'), 'pod B\'s slot and the new one').to.equal(2);
  });
});
