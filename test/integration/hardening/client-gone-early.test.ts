import { expect } from 'chai';
import type { Transaction } from 'sequelize';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { keyHeader } from '../../helpers/http';
import { pngOf } from '../../helpers/images';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { db } from '../../../shared/db/sequelize';
import { UsageEvent } from '../../../shared/db/models';

/** Some request of this transaction's table waits on its lock (the gateway's insert or lookup). */
const blockedOn = (table: string) =>
  waitFor(async () => {
    const [rows] = await db().query(`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = '${table}'::regclass`);
    return (rows as Array<{ n: number }>)[0].n > 0;
  }, 10_000);

/**
 * A client that leaves while the pod still awaits something before the job (here Postgres, held by
 * a lock the test takes): the response's `close` has passed by the time the job would be added, so
 * the pod must read the response's state, not wait for an event that already fired.
 */
describe('a client gone before its job is added', function () {
  this.timeout(40_000);
  let lock: Transaction | undefined;
  let o: TestOrg;
  beforeEach(async () => {
    resetSim();
    o = await buildOrg(env().redis);
  });
  afterEach(async () => {
    await lock?.rollback().catch(() => undefined);
    lock = undefined;
    env().sim.knobs.release();
    resetSim();
  });

  /** Sends `send` while `table` is locked, leaves once the gateway waits on it, then lets it go on. */
  async function leaveWhileBlocked(table: string, mode: string, send: (signal: AbortSignal) => Promise<unknown>): Promise<void> {
    lock = await db().transaction();
    await db().query(`LOCK TABLE ${table} IN ${mode} MODE`, { transaction: lock });
    const client = new AbortController();
    const sent = send(client.signal).catch((e: unknown) => e);
    expect(await blockedOn(table), `the request waits on ${table}`).to.equal(true);
    client.abort();
    expect(await sent).to.be.instanceOf(Error);
    await new Promise((r) => setTimeout(r, 300)); // the pod has seen the close
    await lock.commit();
    lock = undefined;
  }

  const edit = async (signal: AbortSignal) => {
    const form = new FormData();
    form.append('model', 'sim-image');
    form.append('prompt', 'edit me');
    form.append('size', '256x256');
    form.append('image', new Blob([await pngOf(32, 32)], { type: 'image/png' }), 'a.png');
    return fetch(`${env().gw.url}/v1/images/edits`, { method: 'POST', headers: keyHeader(o.key), body: form, signal });
  };

  it('an image edit left during its upload’s insert: no job, no lease, nothing upstream, nothing billed', async () => {
    env().sim.knobs.set('sim-image-1', { hold: true });
    await leaveWhileBlocked('images', 'SHARE', edit);
    await new Promise((r) => setTimeout(r, 1000)); // time for a job to be added and taken, were one added
    expect(await env().gw.ctx.leases.count(o.org.id, 'images', 'interactive'), 'lease').to.equal(0);
    const jobs = (await env().gw.ctx.queues.get('images-interactive').getJobs(['active', 'waiting', 'prioritized'])).filter((j) => j?.data.orgId === o.org.id);
    expect(jobs, 'jobs of the org').to.have.length(0);
    expect(env().sim.log.entries.filter((e) => e.path.includes('/images/')), 'upstream calls').to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'usage').to.equal(0);
  });

  it('a request left during authentication is not counted open by fair reading (its org is not held over its share)', async () => {
    const fair = env().gw.ctx.fairRead;
    expect(fair.enabled, 'fair reading on (the default)').to.equal(true);
    await leaveWhileBlocked('api_keys', 'ACCESS EXCLUSIVE', (signal) => fetch(`${env().gw.url}/v1/models`, { headers: keyHeader(o.key), signal }));
    await new Promise((r) => setTimeout(r, 500));
    expect(fair.openCounts().get(o.org.id), 'open requests of the org').to.equal(undefined);
    const r = await fetch(`${env().gw.url}/v1/models`, { headers: keyHeader(o.key) });
    expect(r.status).to.equal(200);
    await r.text();
    await waitFor(() => !fair.openCounts().has(o.org.id), 1000);
    expect(fair.openCounts().get(o.org.id), 'after a normal request').to.equal(undefined);
  });
});
