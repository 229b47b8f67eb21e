import { performance } from 'perf_hooks';
import type { Worker } from 'bullmq';
import { workerConcurrencyFactor } from '../shared/metrics';
import { LoopLagTicker, RecentOrgs } from '../shared/loop-lag';

/**
 * Adaptive concurrency of a worker process's interactive workers (issue 29 part 4; docs/scaling.md,
 * *Fair under a flood*). A worker process runs all its jobs on one event loop: when a flood keeps
 * every slot busy, the loop runs behind and every job's run stretches, a quiet organization's job
 * included, although the queue's fair share gave it the next slot. So while the loop runs more than
 * `lagMs` behind, the governor takes fewer jobs (each worker's concurrency times a factor that
 * shrinks per lagging tick, `cutStep`, down to `minFactor`); while it is calm (under half of
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

/**
 * A cut takes away a quarter of the factor or the slots that CUT_STALL_MS of job starts fill at the
 * rate jobs start here, whichever is less (one slot at least): after a cut the workers fetch nothing
 * until as many running jobs have finished, and a quiet organization's job, first in the queue, waits
 * that long for a slot. A flood of quick jobs that takes every core started about a job a millisecond
 * here: 10 slots a lagging tick, a quarter once under 40. A flood of jobs that wait on their upstream
 * for most of a second starts a third of that, and a quarter of 256 slots stopped every fetch for about
 * 200 ms, while such a process's loop runs behind only now and then (a collection, answers that
 * arrive together) and fewer slots do not make it faster: with a quarter a cut, the quiet
 * organization's p99 read 9.4x its alone figure and the flood 228 req/s; with this bound 2.6x and
 * 373 req/s (the flood of quick jobs: 6.4x against 9.2x, the price; docs/benchmark.md, *twelfth session*).
 */
const CUT_STALL_MS = 10;

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
  /** Jobs started here since the last tick, when that was, and the rate they start at (a ms, moving average). */
  private startedSinceTick = 0;
  private lastTick = 0;
  private startRate = 0;
  lag = 0;

  /**
   * `workers`: the governed ones. `observed`: workers whose jobs count as this process's (their orgs,
   * their starts) but whose concurrency is left alone: the express workers, whose jobs are the quiet
   * organizations' (shared/queues/express.ts); without them the governor saw one organization only.
   */
  constructor(workers: Worker[], private readonly opts: GovernorOptions, observed: Worker[] = []) {
    this.ticker = new LoopLagTicker(opts.tickMs ?? 10, (lag) => this.tick(lag));
    for (const w of workers) this.base.set(w, w.concurrency);
    if (this.enabled) for (const w of [...workers, ...observed]) w.on('active', (job) => this.note((job.data as { orgId?: string }).orgId ?? ''));
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
    this.startedSinceTick++;
    if (this.orgs.note(orgId) > 1 && this.started && !this.ticker.running) {
      this.lastTick = performance.now();
      this.startedSinceTick = 0;
      this.ticker.start();
    }
  }

  /** Jobs of more than one organization started here in the last 2 s. */
  private contended(): boolean {
    return this.orgs.count() > 1;
  }

  private tick(lag: number): void {
    this.lag = lag;
    const before = this.factor;
    const contended = this.contended();
    this.noteStartRate();
    if (this.lag > this.opts.lagMs && contended) this.factor = Math.max(this.opts.minFactor, this.factor - this.cutStep());
    else if (this.lag < this.opts.lagMs / 2) this.factor = Math.min(1, this.factor + (contended ? GROW_CONTENDED : GROW_ALONE));
    if (this.factor === before) {
      // calm, at full concurrency, one organization: stop sampling until a second one shows up
      if (this.factor === 1 && !contended) this.ticker.stop();
      return;
    }
    workerConcurrencyFactor.set(this.factor);
    for (const w of this.base.keys()) this.apply(w);
  }

  private noteStartRate(): void {
    const now = performance.now();
    const ms = now - this.lastTick;
    if (ms > 0) this.startRate = 0.8 * this.startRate + (0.2 * this.startedSinceTick) / ms;
    this.lastTick = now;
    this.startedSinceTick = 0;
  }

  /** How much of the factor one lagging tick takes: a quarter, or the slots CUT_STALL_MS of starts fill (one at least). */
  private cutStep(): number {
    let slots = 0;
    for (const n of this.base.values()) slots += n;
    const stallSlots = Math.max(1, this.startRate * CUT_STALL_MS);
    return Math.min(this.factor * 0.25, stallSlots / Math.max(1, slots));
  }

  private apply(w: Worker): void {
    const n = Math.max(1, Math.round(this.base.get(w)! * this.factor));
    if (w.concurrency !== n) w.concurrency = n;
  }
}
