import { expect } from 'chai';
import type { Transaction } from 'sequelize';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { db } from '../../../shared/db/sequelize';
import { credit } from '../../../shared/billing/wallet';
import { config } from '../../../shared/config/env';
import { CreditReservation, UsageEvent } from '../../../shared/db/models';
import { validBody } from './helpers';

/**
 * Backends of this test's database waiting on a row lock (the worker's settle, a pod's release).
 * pg_locks spans the whole server, and a transaction id lock names no database: the waiter's own
 * session says which it is, so other suites running on the same server are not counted.
 */
const waitingOnRows = async (): Promise<number> => {
  const [rows] = await db().query(
    "SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE NOT l.granted AND l.locktype IN ('transactionid', 'tuple') AND a.datname = current_database()",
  );
  return (rows as Array<{ n: number }>)[0].n;
};

/**
 * A decision's charge is made in Postgres (the wallet), outside the Redis script that decides the
 * pod/worker race for other endpoints. The worker marks the request delivered before it charges, so
 * a pod whose deadline passes while the charge waits (here: the org's wallet row held by a lock the
 * test takes, as a burst of the org's own requests can) delivers the answer it is charged for
 * instead of answering 504 for a request that is charged anyway; and a pod whose client leaves then
 * leaves the charge to the worker (before, it released the reservation at once, and a release that
 * reached the wallet before the worker's settle left the answered decision unbilled).
 */
describe('systemone: the deadline passes, or the client leaves, while the worker charges the wallet', function () {
  this.timeout(30_000);
  let lock: Transaction | undefined;
  afterEach(async () => {
    await lock?.rollback().catch(() => undefined);
    lock = undefined;
    resetSim();
  });

  /** A metered decision sent, its worker holding the answer and waiting to charge the wallet the test locked. */
  async function workerWaitsToCharge(delayMs: number, signal?: AbortSignal) {
    resetSim();
    env().sim.knobs.set('sim-chat-1', { delayMs });
    const o = await buildOrg(env().redis, { policies: { systemone: 'metered' } });
    await credit(o.org.id, 1_000_000);
    const started = Date.now();
    const sent = fetch(`${env().gw.url}/v1/systemone`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
      body: JSON.stringify(validBody()),
      signal,
    });
    expect(await waitFor(async () => (await CreditReservation.count({ where: { orgId: o.org.id } })) === 1, 5000), 'reserved').to.equal(true);
    lock = await db().transaction();
    await db().query('SELECT id FROM wallets WHERE org_id = :id FOR UPDATE', { replacements: { id: o.org.id }, transaction: lock });
    expect(await waitFor(async () => (await waitingOnRows()) === 1, 10_000), 'the worker has its answer and waits to charge').to.equal(true);
    return { o, sent, started };
  }

  it('the answer is delivered (200) and charged once, not a 504 that is charged', async () => {
    const { o, sent, started } = await workerWaitsToCharge(1000);
    // past the pod's deadline, then the charge goes through
    await new Promise((r) => setTimeout(r, Math.max(0, started + config().systemoneTimeoutMs + 500 - Date.now())));
    await lock!.commit();
    lock = undefined;
    const res = await sent;
    const text = await res.text();
    expect(res.status, text).to.equal(200);
    await usageSettled();
    const reservation = await CreditReservation.findOne({ where: { orgId: o.org.id } });
    expect(reservation!.state).to.equal('settled');
    expect(await UsageEvent.count({ where: { requestId: res.headers.get('x-service-request-id')! } }), 'billed once').to.equal(1);
  });

  it('a client that leaves then is charged by the worker: the pod queues no release under it', async () => {
    const client = new AbortController();
    const { o, sent } = await workerWaitsToCharge(500, client.signal);
    client.abort();
    expect(await sent.catch((err: Error) => err)).to.be.instanceOf(Error);
    expect(await waitFor(async () => (await waitingOnRows()) > 1, 2000), 'no release queued behind the worker').to.equal(false);
    await lock!.commit();
    lock = undefined;
    const reservation = await waitFor(async () => {
      const r = await CreditReservation.findOne({ where: { orgId: o.org.id } });
      return r && r.state !== 'reserved' ? r : undefined;
    }, 5000);
    expect(reservation?.state).to.equal('settled');
    expect(Number(reservation!.settledMicros)).to.be.greaterThan(0);
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { orgId: o.org.id } });
    expect(events).to.have.length(1);
    expect(Number((events[0].units as Record<string, number>).billed_micros)).to.equal(Number(reservation!.settledMicros));
  });
});
