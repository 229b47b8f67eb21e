import crypto from 'crypto';
import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';
import { createRedis } from '../../../shared/redis/connection';
import { claimHeldUsage, giveUp, publishWithUsage } from '../../../shared/metering/usage-outbox';
import type { UsageRecord } from '../../../shared/metering/usage';
import { keys } from '../../../shared/redis/keys';
import { waitFor } from '../../helpers/wait';

/**
 * "Billed exactly when delivered" at the point where the pod and the worker race (real Redis, the
 * scripts the worker and the pod run): the one that marks the request first decides.
 */
describe('billing only delivered answers: the pod/worker race', () => {
  let o: TestOrg;
  const sub = createRedis('subscriber');
  const other = createRedis('command');
  const channel = `${keys.replyChannel('billing-race-pod')}`;
  const received: string[] = [];

  before(async () => {
    o = await buildOrg(env().redis);
    sub.on('smessage', (_c: string, m: string) => received.push(m));
    await sub.ssubscribe(channel);
  });
  after(() => {
    sub.disconnect();
    other.disconnect();
  });

  const usageOf = (requestId: string): UsageRecord => ({
    requestId,
    orgId: o.org.id,
    projectId: o.project.id,
    apiKeyId: o.keyId,
    model: 'sim-chat',
    modality: 'chat',
    lane: 'interactive',
    inputTokens: 3,
    outputTokens: 5,
  });
  const newId = () => `req_${crypto.randomBytes(8).toString('hex')}`;
  const billed = async (requestId: string) => {
    await usageSettled();
    return UsageEvent.count({ where: { requestId } });
  };

  it('the pod gives up first (504 / client gone): the worker publishes nothing and bills nothing', async () => {
    const id = newId();
    expect(await giveUp(env().redis, channel, id)).to.equal(true);
    expect(await publishWithUsage(env().redis, channel, `result ${id}`, usageOf(id))).to.equal(-1);
    await new Promise((r) => setTimeout(r, 100));
    expect(received).not.to.include(`result ${id}`);
    expect(await billed(id)).to.equal(0);
  });

  it('the worker publishes first: billed once, and the pod that reaches its deadline now must deliver, not 504', async () => {
    const id = newId();
    expect(await publishWithUsage(env().redis, channel, `result ${id}`, usageOf(id))).to.equal(1);
    expect(await giveUp(env().redis, channel, id)).to.equal(false);
    expect(await waitFor(() => received.includes(`result ${id}`), 2000)).to.equal(true);
    expect(await billed(id)).to.equal(1);
  });

  it('no pod listens (it died): the usage is held, not billed, and billed once if a pod recovers and delivers the result', async () => {
    const dead = newId();
    const nobody = keys.replyChannel(`dead-pod-${dead}`);
    expect(await publishWithUsage(env().redis, nobody, 'result', usageOf(dead))).to.equal(0);
    // the publish found no listener: the event it had added is out of the outbox again, held instead
    const inOutbox = await env().redis.xrange(keys.usageOutboxFor(nobody), '-', '+');
    expect(inOutbox.filter(([, f]) => f[1]?.includes(dead)), 'no outbox entry left behind').to.have.length(0);
    expect(await billed(dead)).to.equal(0);
    expect(await env().redis.exists(keys.usageHeld(nobody, dead))).to.equal(1);

    const recovered = newId();
    expect(await publishWithUsage(env().redis, nobody, 'result', usageOf(recovered))).to.equal(0);
    expect(await claimHeldUsage(env().redis, nobody, recovered)).to.equal(true);
    expect(await claimHeldUsage(env().redis, nobody, recovered), 'a second claim bills nothing').to.equal(false);
    expect(await billed(recovered)).to.equal(1);
  });

  it('many concurrent races each end exactly one way: billed and delivered, or neither', async function () {
    this.timeout(20_000);
    const ids = Array.from({ length: 200 }, newId);
    const outcomes = await Promise.all(
      ids.map(async (id, i) => {
        // two connections, and either side first: the outcome of each pair is decided in Redis
        const publish = () => publishWithUsage(env().redis, channel, `result ${id}`, usageOf(id));
        const abandon = () => giveUp(other, channel, id);
        const [pub, gaveUp] = i % 2 ? await Promise.all([publish(), abandon()]) : (await Promise.all([abandon(), publish()])).reverse() as [number, boolean];
        return { id, pub, gaveUp };
      }),
    );
    await usageSettled();
    const rows = await UsageEvent.findAll({ where: { requestId: ids } });
    const billedIds = new Set(rows.map((r) => r.requestId));
    for (const x of outcomes) {
      expect(x.gaveUp, x.id).to.equal(x.pub === -1); // the pod gave up exactly when the worker stood down
      expect(billedIds.has(x.id), x.id).to.equal(x.pub === 1); // billed exactly when the result went out
    }
    expect(rows.length).to.equal(outcomes.filter((x) => x.pub === 1).length);
  });
});
