import type { Socket } from 'net';
import type { Request, Response } from 'express';
import { fairReadPauses } from '../shared/metrics';
import { LoopLagTicker, RecentOrgs } from '../shared/loop-lag';

/**
 * Fair reading when the web pod is overloaded (issue 29 part 4; docs/scaling.md, *Fair under a flood*).
 *
 * One event loop reads every organization's requests first come, first served, so an organization
 * that keeps hundreds of requests in flight fills each turn of the loop, and a quiet organization's
 * request waits behind them before its job is even added (measured: 600 of its 900 ms). The queue's
 * fair share cannot help with time spent before the queue.
 *
 * So, while the pod's event loop runs behind by more than `lagMs`: when a response of an
 * organization holding more than its share of the pod's open requests (more than the average over
 * the organizations seen in the last `recentMs`, and more than `minOpen`) finishes, the keep-alive
 * connection it came on is not read again (socket.pause(): its next request stays in the kernel's
 * buffer, unparsed) until the loop has caught up (lag under half of `lagMs`; the oldest first, a
 * batch that doubles each calm tick), or for at most `maxPauseMs`. The organizations within their
 * share, the quiet one included, are read at once. One organization alone on the pod is never paused: there is nobody to be fair to. A connection
 * that has carried requests of more than one organization (an L7 proxy's pooled connection) is
 * never paused either: its next request may be anyone's. Behind such a proxy fair reading therefore
 * does nothing, and the proxy's own per-client limits are what keep a flood from the pod.
 */
export interface FairReadOptions {
  /** Loop delay (ms) above which over-share connections are paused; 0 turns fair reading off. */
  lagMs: number;
  /** The longest a connection stays paused (kept well under the keep-alive timeout). */
  maxPauseMs: number;
  /** Open requests an organization may hold on the pod without ever being paused. */
  minOpen: number;
  /** How long an organization counts as active on the pod after its last request. */
  recentMs?: number;
  /** How often the loop's delay is sampled. */
  tickMs?: number;
}

/** A connection that carried requests of more than one organization. */
const MIXED = '\u0000mixed';

/** Connections resumed in the first calm tick after a lagging one. */
const MIN_RESUME_BATCH = 4;

interface Paused {
  socket: Socket;
  at: number;
}

export class FairRead {
  private readonly open = new Map<string, number>();
  private readonly orgs: RecentOrgs;
  /** The one organization a connection has carried, or MIXED. */
  private readonly socketOrg = new WeakMap<Socket, string>();
  private paused: Paused[] = [];
  private resumeBatch = MIN_RESUME_BATCH;
  private readonly ticker: LoopLagTicker;
  private started = false;
  /** The loop delay of the last tick (ms). */
  lag = 0;
  lagging = false;

  constructor(private readonly opts: FairReadOptions) {
    this.ticker = new LoopLagTicker(opts.tickMs ?? 10, (lag) => this.tick(lag));
    this.orgs = new RecentOrgs(opts.recentMs ?? 2_000);
  }

  get enabled(): boolean {
    return this.opts.lagMs > 0;
  }

  /**
   * Turns fair reading on. The loop is sampled only while more than one organization is active on
   * the pod (a timer every 10 ms otherwise costs an idle or single-tenant pod wake-ups for nothing).
   */
  start(): void {
    this.started = this.enabled;
  }

  stop(): void {
    this.started = false;
    this.ticker.stop();
    this.lagging = false;
    this.resumeAll();
  }

  /** Whether the loop is being sampled now (more than one organization active). */
  get sampling(): boolean {
    return this.ticker.running;
  }

  /** Counts an authenticated request of `orgId` as open on the pod until its response closes. */
  admit(req: Request, res: Response, orgId: string): void {
    // a client that left during authentication: its 'close' has passed, so it would never be uncounted
    if (!this.enabled || res.closed) return;
    const socket = req.socket;
    const carried = this.socketOrg.get(socket);
    if (carried === undefined) this.socketOrg.set(socket, orgId);
    else if (carried !== orgId) this.socketOrg.set(socket, MIXED);
    this.open.set(orgId, (this.open.get(orgId) ?? 0) + 1);
    if (this.orgs.note(orgId) > 1 && this.started && !this.ticker.running) this.ticker.start();
    let counted = true;
    const done = () => {
      if (!counted) return;
      counted = false;
      const n = (this.open.get(orgId) ?? 1) - 1;
      if (n > 0) this.open.set(orgId, n);
      else this.open.delete(orgId);
    };
    res.once('finish', () => {
      // a connection that carried more than one org (a proxy's pooled connection) is never paused
      const over = this.lagging && this.socketOrg.get(socket) === orgId && this.overShare(orgId);
      done();
      if (over) this.pause(socket);
    });
    res.once('close', done);
  }

  /** Open requests of the pod, by organization (tests). */
  openCounts(): ReadonlyMap<string, number> {
    return this.open;
  }

  pausedCount(): number {
    return this.paused.length;
  }

  /** More open requests than the average of the organizations active on the pod (and at least minOpen). */
  private overShare(orgId: string): boolean {
    const mine = this.open.get(orgId) ?? 0;
    if (mine <= this.opts.minOpen) return false;
    const orgs = this.activeOrgs();
    let total = 0;
    for (const n of this.open.values()) total += n;
    return orgs > 1 && mine > total / orgs;
  }

  /** Organizations with open requests or seen in the last `recentMs`. */
  private activeOrgs(): number {
    return this.orgs.count((org) => this.open.has(org));
  }

  private pause(socket: Socket): void {
    if (socket.destroyed) return;
    socket.pause();
    this.paused.push({ socket, at: Date.now() });
    fairReadPauses.inc();
  }

  private tick(lag: number): void {
    this.lag = lag;
    if (this.lag > this.opts.lagMs) this.lagging = true;
    else if (this.lag < this.opts.lagMs / 2) this.lagging = false;
    if (!this.paused.length) {
      // back to one organization (or none): stop sampling until a second one shows up
      if (!this.lagging && this.activeOrgs() <= 1) this.ticker.stop();
      return;
    }
    // caught up: resume the oldest, a batch that doubles each calm tick and halves each lagging one,
    // so hundreds of paused connections do not all send their next request into the same turn
    if (!this.lagging) this.resumeBatch = Math.min(this.resumeBatch * 2, 1024);
    else this.resumeBatch = Math.max(MIN_RESUME_BATCH, this.resumeBatch >> 1);
    const oldest = Date.now() - this.opts.maxPauseMs;
    let n = this.lagging ? 0 : this.resumeBatch;
    while (this.paused.length && (n > 0 || this.paused[0].at <= oldest)) {
      const p = this.paused.shift()!;
      if (!p.socket.destroyed) p.socket.resume();
      n--;
    }
  }

  private resumeAll(): void {
    const all = this.paused;
    this.paused = [];
    for (const p of all) if (!p.socket.destroyed) p.socket.resume();
  }
}
