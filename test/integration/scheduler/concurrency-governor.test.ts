import { expect } from 'chai';
import { Worker } from 'bullmq';
import { createRedis, type RedisClient } from '../../../shared/redis/connection';
import { keys } from '../../../shared/redis/keys';
import { ConcurrencyGovernor } from '../../../workers/concurrency-governor';
import { pools, poolsWithSettings } from '../../helpers/pools';
import { config, loadConfig } from '../../../shared/config/env';
import { waitFor } from '../../helpers/wait';
import { lagLoop } from '../../helpers/busy-loop';

/**
 * workers/concurrency-governor.ts on a real BullMQ worker (not started: its concurrency is what the
 * governor sets), with this process's event loop kept behind by a busy interval.
 */
describe('worker concurrency governor: fewer interactive jobs while the worker process lags under more than one organization', function () {
  this.timeout(45_000);
  let conn: RedisClient;
  let worker: Worker;
  let governor: ConcurrencyGovernor | undefined;
  let stopLag: (() => void) | undefined;

  beforeEach(async () => {
    conn = createRedis('worker');
    worker = new Worker('governor-test', async () => undefined, { connection: conn, autorun: false, concurrency: 64, prefix: keys.bullPrefix('governor-test') });
  });
  afterEach(async () => {
    stopLag?.();
    governor?.stop();
    await worker.close();
    conn.disconnect();
  });

  /**
   * A started governor of `worker` with a 10 ms lag threshold and floor `minFactor`: half the 20 ms
   * the tests' busy interval keeps the loop behind, and above what a loaded test machine (several
   * suites on two cores) makes a calm loop lag, which a 5 ms threshold read as lag, so calm never came.
   */
  const startGovernor = (minFactor: number) => {
    governor = new ConcurrencyGovernor([worker], { lagMs: 10, minFactor, tickMs: 5 });
    governor.start();
    return governor;
  };
  /** Jobs of two organizations, and the loop kept 20 ms behind. */
  const contendedAndLagging = (g: ConcurrencyGovernor) => {
    g.note('org-a');
    g.note('org-b');
    stopLag = lagLoop(20);
  };

  it('two organizations and a lagging loop: concurrency falls toward the floor; calm again, back to the operator\'s figure', async () => {
    contendedAndLagging(startGovernor(0.05));
    expect(await waitFor(() => worker.concurrency <= 8, 5_000, 1), `concurrency ${worker.concurrency}`).to.equal(true);
    expect(worker.concurrency).to.be.at.least(Math.round(64 * 0.05));
    stopLag?.();
    expect(await waitFor(() => worker.concurrency === 64, 15_000, 5), `concurrency ${worker.concurrency}`).to.equal(true);
    expect(await waitFor(() => !governor!.sampling, 5_000, 5), 'sampling stops once only one org is left').to.equal(true);
  });

  it('calm again while both organizations still send: the slots come back slowly, not at once (a flood would refill them)', async () => {
    const g = startGovernor(0.05);
    contendedAndLagging(g);
    expect(await waitFor(() => worker.concurrency <= 8, 5_000, 1), `concurrency ${worker.concurrency}`).to.equal(true);
    stopLag?.();
    stopLag = undefined;
    // both organizations' jobs keep arriving: still contended, the loop calm
    const jobs = setInterval(() => {
      g.note('org-a');
      g.note('org-b');
    }, 20);
    try {
      await new Promise((r) => setTimeout(r, 300));
      // 60 calm ticks of 5 ms: at 1/32 a tick (the growth of a process with one organization) it would be back at 64
      expect(worker.concurrency, 'after 300 ms of calm, still contended').to.be.below(32);
      expect(await waitFor(() => worker.concurrency === 64, 15_000, 5), `concurrency ${worker.concurrency}`).to.equal(true);
    } finally {
      clearInterval(jobs);
    }
  });

  it('two organizations, jobs starting a few a second, the loop behind now and then: each cut is a slot or so, not a quarter', async () => {
    const g = startGovernor(0.05);
    const jobs = setInterval(() => {
      g.note('org-a');
      g.note('org-b');
    }, 20);
    // one 30 ms stall every 150 ms (a collection, answers arriving together): at 100 jobs a second, 10 ms of
    // starts is one slot; a quarter of the slots per stall (the cut before) would leave under 45 after a second
    const stalls = setInterval(() => {
      const until = Date.now() + 30;
      while (Date.now() < until) { /* a lone stall */ }
    }, 150);
    let maxLag = 0;
    const watch = setInterval(() => (maxLag = Math.max(maxLag, g.lag)), 1);
    try {
      await new Promise((r) => setTimeout(r, 1_000));
      expect(g.sampling, 'contended: the loop is sampled').to.equal(true);
      expect(maxLag, 'the governor saw ticks behind its 10 ms').to.be.above(10);
      // (above 50, not 60: a busy machine's own lag adds cuts; a quarter per stall would be under 45)
      expect(worker.concurrency, 'a slot or so per stall, given back between them').to.be.at.least(50);
      // the same two organizations with the loop behind tick after tick: cut
      stopLag = lagLoop(20);
      expect(await waitFor(() => worker.concurrency < 40, 5_000, 1), `concurrency ${worker.concurrency}`).to.equal(true);
    } finally {
      clearInterval(jobs);
      clearInterval(stalls);
      clearInterval(watch);
    }
  });

  it('counts the jobs of an express worker it does not govern: a quiet org there and a flood here contend; only the governed worker is cut', async () => {
    const express = new Worker('governor-test-express', async () => undefined, { connection: conn, autorun: false, concurrency: 8, prefix: keys.bullPrefix('governor-test-express') });
    try {
      governor = new ConcurrencyGovernor([worker], { lagMs: 5, minFactor: 0.05, tickMs: 5 }, [express]);
      governor.start();
      expect(governor.governs(express)).to.equal(false);
      // the workers' own `active` events, as BullMQ emits them when a job starts
      const active = (w: Worker, orgId: string) => (w as unknown as { emit(e: string, job: unknown): void }).emit('active', { data: { orgId } });
      active(worker, 'org-flood');
      active(express, 'org-quiet');
      expect(governor.sampling, 'two organizations: the loop is sampled').to.equal(true);
      stopLag = lagLoop(20);
      expect(await waitFor(() => worker.concurrency <= 8, 5_000, 1), `concurrency ${worker.concurrency}`).to.equal(true);
      expect(express.concurrency, 'the express slots are left alone').to.equal(8);
    } finally {
      await express.close();
    }
  });

  it('one organization alone: the concurrency stays, however far behind the loop is', async () => {
    const g = startGovernor(0.05);
    // one organization's jobs keep arriving while the loop lags
    const jobs = setInterval(() => g.note('org-a'), 3);
    stopLag = lagLoop(20);
    await new Promise((r) => setTimeout(r, 500));
    clearInterval(jobs);
    expect(g.sampling, 'one organization: the loop is not even sampled').to.equal(false);
    expect(worker.concurrency).to.equal(64);
    // a second organization starts the sampling, and the concurrency falls
    g.note('org-b');
    expect(g.sampling).to.equal(true);
    expect(await waitFor(() => worker.concurrency < 64, 5_000, 1)).to.equal(true);
  });

  it('the operator\'s concurrency (scheduler settings) is the ceiling the factor applies to; stop restores it', async () => {
    const g = startGovernor(0.25);
    contendedAndLagging(g);
    expect(await waitFor(() => g.currentFactor === 0.25, 5_000, 1)).to.equal(true);
    g.setBase(worker, 32);
    expect(worker.concurrency).to.equal(8);
    stopLag?.();
    g.stop();
    expect(worker.concurrency).to.equal(32);
  });

});

// The test environment turns the governor off (scripts/test-env.ts: the pod, the workers and the
// test share one loop there); these start the process's pools with it on, as production runs.
describe('worker concurrency governor in a worker process (WORKER_LAG_MS on by default)', () => {
  poolsWithSettings({ WORKER_LAG_MS: '5' });

  it('is on by default, and governs the interactive lanes only, not the background lane', () => {
    const { WORKER_LAG_MS: _unset, ...defaults } = process.env;
    expect(loadConfig(defaults).workerGovernor.lagMs).to.be.above(0);
    const g = pools().governor;
    expect(config().workerGovernor.lagMs).to.equal(5);
    const names = pools().workers.filter((w) => g.governs(w)).map((w) => w.name);
    expect(names).to.include('chat-interactive');
    expect(names).to.not.include('chat-background');
  });
});
