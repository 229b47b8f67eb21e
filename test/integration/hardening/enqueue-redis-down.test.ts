import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { expectErrorEnvelope } from '../../helpers/errors';
import { usageSettled } from '../../helpers/usage';
import { producerDownPod } from '../../helpers/producer-down';
import { UsageEvent } from '../../../shared/db/models';
import { leasesFreed } from '../../helpers/leases';

/**
 * Redis lost between the lane lease and the enqueue: a pod whose leases live on the shared Redis
 * and whose producer connection (the one it adds jobs on) goes to a redis-server of the test's own,
 * which is killed. The enqueue must fail fast (503 + Retry-After), not wait for the request deadline.
 */
describe('enqueue while Redis is away', function () {
  this.timeout(30_000);

  it('answers 503 service_unavailable with Retry-After promptly, frees the lease and bills nothing', async () => {
    const pod = await producerDownPod('enqueue-down');
    try {
      const o = await buildOrg(env().redis);
      await pod.stopProducer();
      const t = Date.now();
      const r = await call('POST', '/v1/chat/completions', { base: pod.base, headers: keyHeader(o.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] } });
      expect(r.status, r.text).to.equal(503);
      expectErrorEnvelope(r.text, 'service_unavailable');
      expect(Number(r.headers.get('retry-after'))).to.be.at.least(1);
      expect(Date.now() - t, 'failed fast, not at the request deadline').to.be.below(3000);
      expect(await leasesFreed(pod.ctx.leases, o.org.id, 'chat', 'interactive'), 'lease released').to.equal(true);
      await usageSettled();
      expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(0);
    } finally {
      await pod.close();
    }
  });
});
