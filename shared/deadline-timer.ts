/**
 * Whole seconds of a deadline timer's first wait (below): long deadlines a request's lifetime away
 * share one of Node's timer lists.
 */
const STEP_MS = 1000;

/**
 * A timer for an absolute deadline (epoch ms) that shares Node's timer lists. Node keeps one list
 * per distinct duration, and a timer whose duration no pending timer has makes a new list, which goes
 * into the timers' priority queue and comes out again when the timer is cleared. `deadline -
 * Date.now()` is a different number of milliseconds for nearly every request, so a plain
 * `setTimeout` to a request's deadline paid that twice a request, on the pod and on the worker
 * (issue 29, docs/benchmark.md). This one first waits the whole seconds before the deadline, a
 * duration the other requests in flight share, and only a request still running then waits the
 * rest exactly. It fires at the deadline, as `setTimeout` would, and never before it.
 */
export class DeadlineTimer {
  private timer: NodeJS.Timeout;

  constructor(
    private readonly deadline: number,
    private readonly fire: () => void,
  ) {
    const left = Math.max(0, deadline - Date.now());
    this.timer = setTimeout(this.due, left >= STEP_MS ? Math.floor(left / STEP_MS) * STEP_MS : left);
  }

  /**
   * After the whole seconds, the rest. Node's timers run on the loop's monotonic clock in whole
   * milliseconds, so a timer can also come due up to a millisecond before the wall clock (Date.now)
   * reaches the deadline: then it waits the rest too.
   */
  private readonly due = (): void => {
    const left = this.deadline - Date.now();
    if (left > 0) this.timer = setTimeout(this.due, left);
    else this.fire();
  };

  clear(): void {
    clearTimeout(this.timer);
  }
}
