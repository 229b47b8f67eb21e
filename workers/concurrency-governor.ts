import type { Worker } from 'bullmq';
import { workerConcurrencyFactor } from '../shared/metrics';
import { LoopLagTicker, RecentOrgs } from '../shared/loop-lag';

/**
 * Adaptive concurrency of a worker process's interactive workers (issue 29 part 4; docs/scaling.md,
 * *Fair under a flood*). A worker process runs all its jobs on one event loop: when a flood keeps
 * every slot busy, the loop runs behind and every job's run stretches, a quiet organization's job
 * included, although the queue's fair share gave it the next slot. So while the loop runs more than
 * `lagMs` behind, the governor takes fewer jobs (each worker's concurrency times a factor that
 * shrinks by a quarter per lagging tick, down to `minFactor`); while it is calm (under half of
 * `lagMs`) the factor grows back (GROW_CONTENDED, GROW_ALONE). Jobs not taken wait in the queue, where the fair
 * share orders them (the org with fewer jobs in flight first), instead of in this process's loop.
 * It acts only while jobs of more than one organization reached this process in the last 2 s (one
 * organization alone has nobody to be protected from; the queue orders its own jobs). Throughput
 * holds as long as the slots left cover the upstream's latency; the operator's concurrency (env or
 * scheduler settings) is the ceiling, set through `setBase`.
 */
const CONTENDED_WINDOW_MS = 2_000;

/**
 * How far the factor grows back per calm tick. While organizations contend it grows slowly (from the
 * floor to the operator's figure in about 2.5 s of 10 ms ticks): a flood's jobs fill every slot given
 * back at once, and a fast growth only brought the loop's lag, and the quiet organization's wait,
 * back within a few hundred milliseconds (a sawtooth that kept the average concurrency, and every
 * job's run, at several times the floor; docs/benchmark.md, *eleventh session*). One organization
 * alone has nobody to be protected from: it gets its slots back as fast as before.
 */
const GROW_CONTENDED = 1 / 256;
const GROW_ALONE = 1 / 32;

export interface GovernorOptions {
  /** Loop delay (ms) above which the process takes fewer jobs; 0 turns the governor off. */
  lagMs: number;
  /** The smallest fraction of the operator's concurrency kept. */
  minFactor: number;
  tickMs?: number;
}

export class ConcurrencyGovernor {
  private readonly base = new Map<Worker, number>();
  private readonly orgs = new RecentOrgs(CONTENDED_WINDOW_MS);
  private factor = 1;
  private readonly ticker: LoopLagTicker;
  private started = false;
  lag = 0;

  constructor(workers: Worker[], private readonly opts: GovernorOptions) {
    this.ticker = new LoopLagTicker(opts.tickMs ?? 10, (lag) => this.tick(lag));
    for (const w of workers) {
      this.base.set(w, w.concurrency);
      if (this.enabled) w.on('active', (job) => this.note((job.data as { orgId?: string }).orgId ?? ''));
    }
  }

  get enabled(): boolean {
    return this.opts.lagMs > 0;
  }

  /** Whether `w` is governed (its concurrency is set through setBase). */
  governs(w: Worker): boolean {
    return this.enabled && this.base.has(w);
  }

  baseOf(w: Worker): number | undefined {
    return this.base.get(w);
  }

  /** The operator's concurrency for `w` (the ceiling); applied at once times the current factor. */
  setBase(w: Worker, concurrency: number): void {
    this.base.set(w, concurrency);
    this.apply(w);
  }

  /** Turns the governor on; the loop is sampled only while jobs of more than one organization arrive. */
  start(): void {
    this.started = this.enabled;
  }

  /** Whether the loop is being sampled now. */
  get sampling(): boolean {
    return this.ticker.running;
  }

  stop(): void {
    this.started = false;
    this.ticker.stop();
    this.factor = 1;
    for (const w of this.base.keys()) this.apply(w);
  }

  get currentFactor(): number {
    return this.factor;
  }

  /** A job of `orgId` started here (the workers' `active` event). */
  note(orgId: string): void {
    if (this.orgs.note(orgId) > 1 && this.started && !this.ticker.running) this.ticker.start();
  }

  /** Jobs of more than one organization started here in the last 2 s. */
  private contended(): boolean {
    return this.orgs.count() > 1;
  }

  private tick(lag: number): void {
    this.lag = lag;
    const before = this.factor;
    const contended = this.contended();
    if (this.lag > this.opts.lagMs && contended) this.factor = Math.max(this.opts.minFactor, this.factor * 0.75);
    else if (this.lag < this.opts.lagMs / 2) this.factor = Math.min(1, this.factor + (contended ? GROW_CONTENDED : GROW_ALONE));
    if (this.factor === before) {
      // calm, at full concurrency, one organization: stop sampling until a second one shows up
      if (this.factor === 1 && !contended) this.ticker.stop();
      return;
    }
    workerConcurrencyFactor.set(this.factor);
    for (const w of this.base.keys()) this.apply(w);
  }

  private apply(w: Worker): void {
    const n = Math.max(1, Math.round(this.base.get(w)! * this.factor));
    if (w.concurrency !== n) w.concurrency = n;
  }
}
