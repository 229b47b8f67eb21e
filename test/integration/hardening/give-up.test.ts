import { expect } from 'chai';
import type { Transaction } from 'sequelize';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { leasesFreed } from '../../helpers/leases';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { db } from '../../../shared/db/sequelize';
import { Image, UsageEvent } from '../../../shared/db/models';
import { keys } from '../../../shared/redis/keys';
import { resetConfig } from '../../../shared/config/env';
import { completedIn } from '../../helpers/completed-jobs';

const body = { model: 'sim-image', prompt: 'drawn, then given up on', size: '256x256' };
const queue = () => env().gw.ctx.queues.get('images-interactive');

/**
 * The pod's give-up mark (api/dispatch/run-job.ts): when the pod stops waiting (client gone, deadline)
 * while the worker is past its upstream call, the cancel cannot stop the worker, which goes on to
 * publish its result with the usage event; the mark makes that publish bill nothing. Here the image
 * worker is held there by Postgres: the test locks the images table, so the worker's row insert
 * waits after the upstream answered, until the test commits.
 */
describe('the give-up mark: a job the pod stopped waiting for is not billed', function () {
  this.timeout(30_000);
  let o: TestOrg;
  let lock: Transaction | undefined;

  beforeEach(async () => {
    resetSim();
    o = await buildOrg(env().redis);
    lock = await db().transaction();
    await db().query('LOCK TABLE images IN SHARE MODE', { transaction: lock });
  });
  afterEach(async () => {
    await lock?.rollback().catch(() => undefined);
    lock = undefined;
  });

  /** The worker has the upstream's image and waits on its insert (a lock request not granted on `images`). */
  const workerHeldAtInsert = () =>
    waitFor(async () => {
      const [rows] = await db().query("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'images'::regclass");
      return (rows as Array<{ n: number }>)[0].n > 0;
    }, 10_000);

  /** Waits for the worker to finish job `id` (published, or not, and returned): completed (the job removed, its event kept) or failed. */
  const finishedJob = async (id: string) => {
    const done = await waitFor(async () => (await completedIn(env().redis, [queue()], id, 0)) !== undefined || (await queue().getJobState(id)) === 'failed', 10_000);
    expect(done, 'the worker finished the job after the lock went').to.equal(true);
  };

  const nothingBilled = async () => {
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'nothing billed').to.equal(0);
  };

  it('client gone: the pod gives up, the worker stores the image and publishes, nothing is billed, the lease is freed', async () => {
    const client = new AbortController();
    const sent = fetch(`${env().gw.url}/v1/images/generations`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: client.signal,
    }).catch((err: Error) => err);
    expect(await workerHeldAtInsert(), 'the worker waits on its insert').to.equal(true);
    const [job] = (await queue().getJobs(['active'])).filter((j) => j?.data.orgId === o.org.id);
    client.abort();
    expect(await sent).to.be.instanceOf(Error);
    expect(await leasesFreed(env().gw.ctx.leases, o.org.id, 'images', 'interactive'), 'lease freed').to.equal(true);
    // the mark is written before the lease is released; a moment for a first-time script load
    await waitFor(async () => (await env().redis.exists(keys.usageFate(job.data.replyTo, job.id!))) === 1, 2000);
    await lock!.commit();
    lock = undefined;
    await finishedJob(job.id!);
    expect(await Image.count({ where: { orgId: o.org.id } }), 'the worker did run to the end').to.equal(1);
    await nothingBilled();
  });

  it('deadline: 504 deadline_exceeded; the worker finishes later and publishes, nothing is billed, the lease is freed', async () => {
    // the in-process gateway reads its configuration per request: a short deadline for this one
    const saved = process.env.REQUEST_TIMEOUT_MS;
    process.env.REQUEST_TIMEOUT_MS = '3000';
    resetConfig();
    let r;
    try {
      r = await call('POST', '/v1/images/generations', { headers: keyHeader(o.key), json: body });
    } finally {
      if (saved === undefined) delete process.env.REQUEST_TIMEOUT_MS;
      else process.env.REQUEST_TIMEOUT_MS = saved;
      resetConfig();
    }
    expect(r.status, r.text).to.equal(504);
    expect(r.body.error.code).to.equal('deadline_exceeded');
    expect(await leasesFreed(env().gw.ctx.leases, o.org.id, 'images', 'interactive'), 'lease freed').to.equal(true);
    expect(await workerHeldAtInsert(), 'the worker is still at its insert').to.equal(true);
    await lock!.commit();
    lock = undefined;
    await finishedJob(r.headers.get('x-service-request-id')!);
    expect(await Image.count({ where: { orgId: o.org.id } }), 'the worker did run to the end').to.equal(1);
    await nothingBilled();
  });
});
