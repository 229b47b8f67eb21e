import type { RedisClient } from '../../shared/redis/connection';

/** When a job was added, taken by a worker and completed (ms, from its events' stream ids). */
export interface JobTimes {
  added?: number;
  active?: number;
  completed?: number;
}

/** How often the streams are read while a cell runs: often enough that trimming (MAXLEN ~10,000) loses nothing. */
const POLL_MS = 250;
const BATCH = 5_000;

/**
 * Follows BullMQ's events streams (`<queue key>:events`) of the given queues (every shard of one) from
 * now on, and keeps when each job was added (`added`/`waiting`), went `active` and `completed`. The
 * bench reads where a request's time went from these, as completed jobs are removed at once
 * (shared/queues/enqueue.ts). A stream id's first part is the Redis server's clock in ms.
 */
export class JobEvents {
  readonly jobs = new Map<string, JobTimes>();
  private readonly last: string[];
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> = Promise.resolve();

  private constructor(
    private readonly redis: RedisClient,
    private readonly streams: string[],
    since: number,
  ) {
    this.last = streams.map(() => `${since}-0`);
  }

  static async follow(redis: RedisClient, queueKeys: string[]): Promise<JobEvents> {
    const [sec, usec] = await redis.time();
    const e = new JobEvents(redis, queueKeys.map((k) => `${k}:events`), Number(sec) * 1000 + Math.floor(Number(usec) / 1000));
    e.timer = setInterval(() => (e.reading = e.reading.then(() => e.readAll())), POLL_MS);
    return e;
  }

  /** Stops following after one last read (events written up to now). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.reading;
    await this.readAll();
  }

  private async readAll(): Promise<void> {
    await Promise.all(this.streams.map((_, i) => this.read(i)));
  }

  private async read(i: number): Promise<void> {
    for (;;) {
      const entries = await this.redis.xrange(this.streams[i], `(${this.last[i]}`, '+', 'COUNT', BATCH);
      for (const [id, f] of entries) this.note(Number(id.split('-')[0]), f);
      if (entries.length) this.last[i] = entries[entries.length - 1][0];
      if (entries.length < BATCH) return;
    }
  }

  private note(at: number, f: string[]): void {
    let event: string | undefined;
    let jobId: string | undefined;
    for (let k = 0; k + 1 < f.length; k += 2) {
      if (f[k] === 'event') event = f[k + 1];
      else if (f[k] === 'jobId') jobId = f[k + 1];
    }
    if (!jobId) return;
    const t = this.jobs.get(jobId) ?? {};
    if (event === 'added' || event === 'waiting') t.added = Math.min(t.added ?? at, at);
    else if (event === 'active') t.active = at;
    else if (event === 'completed') t.completed = at;
    else return;
    this.jobs.set(jobId, t);
  }
}
