import { expect } from 'chai';
import { LeaseManager } from '../../../shared/lanes/leases';
import { keys } from '../../../shared/redis/keys';
import { env } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';

/**
 * A pod that dies holds its lane leases until they expire; nothing sweeps them (the clock's
 * `reap-leases` scan of the whole keyspace is gone, docs/benchmark.md, seventeenth session): each
 * lease expires in its set, every reader purges expired members before it counts, and the set itself
 * carries a TTL of twice the lease's from its last grant or renewal. Two LeaseManagers with a one-second
 * lease play two pods; `stop()` without a release is a pod that died mid-request.
 */
describe('lanes: a dead pod\'s leases go without a sweep', function () {
  this.timeout(15_000);
  const TTL = 1000;
  const org = () => `expiry-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const pods: LeaseManager[] = [];
  const pod = () => {
    const p = new LeaseManager(env().redis, TTL, 0);
    pods.push(p);
    return p;
  };
  afterEach(() => {
    for (const p of pods.splice(0)) p.stop();
  });

  it('the lease set of an org that went quiet expires whole', async () => {
    const o = org();
    const dead = pod();
    expect((await dead.acquire(o, 'chat', 'interactive', 4)).granted).to.equal(true);
    dead.stop(); // died: no release, no renewal
    const key = keys.lease(o, 'chat', 'interactive');
    const ttl = await env().redis.pttl(key);
    expect(ttl, 'the set carries a TTL').to.be.greaterThan(0).and.at.most(2 * TTL);
    expect(await waitFor(async () => (await env().redis.exists(key)) === 0, 2 * TTL + 2000, 50), 'the set is gone').to.equal(true);
  });

  it('beside a live pod that renews its own, the dead pod\'s lease stops counting once it expires and is purged by the next grant', async () => {
    const o = org();
    const [dead, live] = [pod(), pod()];
    expect((await dead.acquire(o, 'chat', 'interactive', 2)).granted).to.equal(true);
    dead.stop();
    expect((await live.acquire(o, 'chat', 'interactive', 2)).granted).to.equal(true);
    expect(await live.count(o, 'chat', 'interactive'), 'both held').to.equal(2);
    // the live pod renews (every ttl/3): its lease and the set outlive the dead one's
    expect(await waitFor(async () => (await live.count(o, 'chat', 'interactive')) === 1, TTL + 2000, 50), 'the dead lease stops counting').to.equal(true);
    await new Promise((r) => setTimeout(r, 2 * TTL));
    const key = keys.lease(o, 'chat', 'interactive');
    expect(await env().redis.exists(key), 'the live pod keeps the set').to.equal(1);
    // a lane count of 2 with one live lease: a grant, after the expired member was purged
    const next = await live.acquire(o, 'chat', 'interactive', 2);
    expect(next.granted).to.equal(true);
    expect(await env().redis.zcard(key), 'only live leases in the set').to.equal(2);
  });
});
