import type { RouteMeta } from './route-meta';

/** A routed job whose answer takes longer than this reports its route to the pod (RouteReport). */
export const ROUTE_REPORT_AFTER_MS = 1000;

/**
 * Tells the waiting pod where a job's router stands (its `m` reply message), for the answers the
 * pod gives without the worker: its own 504 when it wins the race at the deadline, 502 worker_lost
 * when the worker died. Either way the pod then names the deployment and attempts of the attempt in
 * flight (docs/routing.md, "What the caller sees").
 *
 * Nothing is sent for a job answered within ROUTE_REPORT_AFTER_MS of its first attempt (its answer
 * or failure carries the route itself): no message more per request on the hot path. A longer job
 * reports its current route once that time has passed, or sooner when its deadline is nearer than
 * twice that (at the latest ROUTE_REPORT_AFTER_MS before it, at once when less is left), and every
 * later attempt as it starts. `send` is also the place to skip a report the pod does not need
 * (a stream's first chunk went out: its route chunk came with it).
 */
export class RouteReport {
  private latest: RouteMeta | undefined;
  private timer: NodeJS.Timeout | undefined;
  private due = false;
  private stopped = false;

  constructor(
    private readonly deadline: number,
    private readonly send: (m: RouteMeta) => void,
    private readonly afterMs = ROUTE_REPORT_AFTER_MS,
  ) {}

  /** An attempt starts on this route. */
  note(m: RouteMeta): void {
    if (this.stopped) return;
    this.latest = m;
    if (this.due) return this.send(m);
    if (this.timer) return;
    const wait = Math.max(0, Math.min(this.afterMs, this.deadline - this.afterMs - Date.now()));
    this.timer = setTimeout(() => {
      this.due = true;
      this.send(this.latest!);
    }, wait);
  }

  /** The job ended: nothing more is reported. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
