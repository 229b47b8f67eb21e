import { expect } from 'chai';
import type { Transaction } from 'sequelize';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { db } from '../../../shared/db/sequelize';
import { credit } from '../../../shared/billing/wallet';
import { CreditReservation, UsageEvent } from '../../../shared/db/models';
import { validBody } from './helpers';

const waitingOnRows = async (): Promise<number> => {
  const [rows] = await db().query("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND locktype IN ('transactionid', 'tuple')");
  return (rows as Array<{ n: number }>)[0].n;
};

/**
 * The client leaves after the worker has its answer and has claimed its delivery, while the worker
 * waits to charge the wallet (here: the org's wallet row held by a lock the test takes). The charge
 * is the worker's: the pod does not release the reservation under it (before, it did at once, and a
 * release that reached the wallet before the worker's settle left the answered decision unbilled).
 */
describe('systemone: the client leaves while the worker charges the wallet', function () {
  this.timeout(30_000);
  let lock: Transaction | undefined;
  afterEach(async () => {
    await lock?.rollback().catch(() => undefined);
    lock = undefined;
    resetSim();
  });

  it('the pod leaves the charge to the worker: the reservation is settled, the usage billed', async () => {
    resetSim();
    env().sim.knobs.set('sim-chat-1', { delayMs: 500 });
    const o = await buildOrg(env().redis, { policies: { systemone: 'metered' } });
    await credit(o.org.id, 1_000_000);
    const client = new AbortController();
    const sent = fetch(`${env().gw.url}/v1/systemone`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
      body: JSON.stringify(validBody()),
      signal: client.signal,
    }).catch((err: Error) => err);
    expect(await waitFor(async () => (await CreditReservation.count({ where: { orgId: o.org.id } })) === 1, 5000), 'reserved').to.equal(true);
    lock = await db().transaction();
    await db().query('SELECT id FROM wallets WHERE org_id = :id FOR UPDATE', { replacements: { id: o.org.id }, transaction: lock });
    expect(await waitFor(async () => (await waitingOnRows()) === 1, 10_000), 'the worker has its answer and waits to charge').to.equal(true);
    client.abort();
    expect(await sent).to.be.instanceOf(Error);
    expect(await waitFor(async () => (await waitingOnRows()) > 1, 2000), 'the pod queues no release behind the worker').to.equal(false);
    await lock.commit();
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
