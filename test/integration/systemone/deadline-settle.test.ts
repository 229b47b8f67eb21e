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
 * A decision's charge is made in Postgres (the wallet), outside the Redis script that decides the
 * pod/worker race for other endpoints. The worker marks the request delivered before it charges, so
 * a pod whose deadline passes while the charge waits (here: the org's wallet row held by a lock the
 * test takes, as a burst of the org's own requests can) delivers the answer it is charged for
 * instead of answering 504 for a request that is charged anyway.
 */
describe('systemone: the deadline passes while the worker charges the wallet', function () {
  this.timeout(30_000);
  let lock: Transaction | undefined;
  afterEach(async () => {
    await lock?.rollback().catch(() => undefined);
    lock = undefined;
    resetSim();
  });

  it('the answer is delivered (200) and charged once, not a 504 that is charged', async () => {
    resetSim();
    env().sim.knobs.set('sim-chat-1', { delayMs: 1000 });
    const o = await buildOrg(env().redis, { policies: { systemone: 'metered' } });
    await credit(o.org.id, 1_000_000);
    const started = Date.now();
    const sent = fetch(`${env().gw.url}/v1/systemone`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
      body: JSON.stringify(validBody()),
    });
    expect(await waitFor(async () => (await CreditReservation.count({ where: { orgId: o.org.id } })) === 1, 5000), 'reserved').to.equal(true);
    lock = await db().transaction();
    await db().query('SELECT id FROM wallets WHERE org_id = :id FOR UPDATE', { replacements: { id: o.org.id }, transaction: lock });
    const waiting = await waitFor(async () => {
      const [rows] = await db().query("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND locktype IN ('transactionid', 'tuple')");
      return (rows as Array<{ n: number }>)[0].n > 0;
    }, 10_000);
    expect(waiting, 'the worker has its answer and waits to charge').to.equal(true);
    // past the pod's deadline, then the charge goes through
    await new Promise((r) => setTimeout(r, Math.max(0, started + config().systemoneTimeoutMs + 500 - Date.now())));
    await lock.commit();
    lock = undefined;
    const res = await sent;
    const text = await res.text();
    expect(res.status, text).to.equal(200);
    await usageSettled();
    const reservation = await CreditReservation.findOne({ where: { orgId: o.org.id } });
    expect(reservation!.state).to.equal('settled');
    expect(await UsageEvent.count({ where: { requestId: res.headers.get('x-service-request-id')! } }), 'billed once').to.equal(1);
  });
});
