import client from 'prom-client';
import type { OutboxStats } from './metering/usage-outbox';

/** One Prometheus registry per process; each process type exposes it on `/metrics`. */
export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });

/**
 * Small values (a series' label objects) made once per key and reused, so a metric update makes no
 * object per request. Past `max` keys it starts over: variety nobody expected cannot grow it without bound.
 */
export class LabelCache<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}

  get(key: string): V | undefined {
    return this.map.get(key);
  }

  /** Keeps `value` under `key` and returns it. */
  keep(key: string, value: V): V {
    if (this.map.size >= this.max) this.map.clear();
    this.map.set(key, value);
    return value;
  }
}

export const httpDuration = new client.Histogram({
  name: 'gateway_http_request_duration_seconds',
  help: 'HTTP request duration by route and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});

export const jobDuration = new client.Histogram({
  name: 'gateway_job_duration_seconds',
  help: 'Worker job duration by queue and outcome',
  labelNames: ['queue', 'outcome'] as const,
  buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
  registers: [registry],
});

/**
 * Jobs of quiet organizations (at most EXPRESS_MAX_IN_FLIGHT in flight in the lane, each one included; shared/queues/express.ts), by where
 * they went: `express`, or `shards` when the pod's share of the express slots was in use (many of
 * those: more chat workers, or a larger CHAT_EXPRESS_CONCURRENCY).
 */
export const expressJobs = new client.Counter({
  name: 'gateway_express_jobs_total',
  help: 'Jobs of organizations with few jobs in flight (EXPRESS_MAX_IN_FLIGHT), by where they went (express slots or the shards, the share in use)',
  labelNames: ['queue', 'to'] as const,
  registers: [registry],
});

export const laneRejections = new client.Counter({
  name: 'gateway_lane_rejections_total',
  help: 'Requests refused at a lane cap',
  labelNames: ['pool', 'lane'] as const,
  registers: [registry],
});

export const queueRejections = new client.Counter({
  name: 'gateway_queue_backlog_rejections_total',
  help: 'Requests refused because the queue was at its operator-set waiting cap (max_waiting)',
  labelNames: ['queue'] as const,
  registers: [registry],
});

export const workerConcurrencyFactor = new client.Gauge({
  name: 'gateway_worker_concurrency_factor',
  help: 'Fraction of the operator\'s interactive concurrency this worker process takes while its event loop lags (workers/concurrency-governor.ts)',
  registers: [registry],
});

export const fairReadPauses = new client.Counter({
  name: 'gateway_fair_read_pauses_total',
  help: 'Keep-alive connections of an over-share organization not read for a while because the web pod lagged (api/fair-read.ts)',
  registers: [registry],
});

export const usageDrained = new client.Counter({
  name: 'gateway_usage_drained_total',
  help: 'Usage outbox entries this process moved to Postgres (written) or to the dead-letter stream',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** Sources read at scrape time; each app context registers its own and removes it on close. */
interface QueueSource {
  counts(): Promise<Array<{ queue: string; counts: Record<string, number> }>>;
}
interface LaneSource {
  held(): Array<{ pool: string; lane: string; count: number }>;
}
const queueSources = new Set<QueueSource>();
const laneSources = new Set<LaneSource>();

export function addMetricSources(q?: QueueSource, l?: LaneSource): () => void {
  if (q) queueSources.add(q);
  if (l) laneSources.add(l);
  return () => {
    if (q) queueSources.delete(q);
    if (l) laneSources.delete(l);
  };
}

new client.Gauge({
  name: 'gateway_queue_jobs',
  help: 'Jobs per queue and state (waiting, prioritized, active, ...)',
  labelNames: ['queue', 'state'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    const [first] = queueSources;
    if (!first) return;
    for (const { queue, counts } of await first.counts()) for (const [state, n] of Object.entries(counts)) this.set({ queue, state }, n);
  },
});

new client.Gauge({
  name: 'gateway_lane_leases',
  help: 'Lane leases held by this process, by pool and lane',
  labelNames: ['pool', 'lane'] as const,
  registers: [registry],
  collect() {
    this.reset();
    const totals = new Map<string, number>();
    for (const s of laneSources) for (const h of s.held()) totals.set(`${h.pool}|${h.lane}`, (totals.get(`${h.pool}|${h.lane}`) ?? 0) + h.count);
    for (const [k, n] of totals) {
      const [pool, lane] = k.split('|');
      this.set({ pool, lane }, n);
    }
  },
});

/** The usage outbox's backlog, read at scrape time (worker processes register one; see workers/main.ts). */
interface UsageOutboxSource {
  stats(): Promise<OutboxStats>;
}
const outboxSources = new Set<UsageOutboxSource>();

export function addUsageOutboxSource(s: UsageOutboxSource): () => void {
  outboxSources.add(s);
  return () => outboxSources.delete(s);
}

/** One read of the outbox serves every gauge of a scrape (they are collected together). */
let outboxRead: Promise<OutboxStats | undefined> | undefined;
function readOutbox(): Promise<OutboxStats | undefined> {
  const [first] = outboxSources;
  if (!first) return Promise.resolve(undefined);
  outboxRead ??= first
    .stats()
    .catch(() => undefined)
    .finally(() => (outboxRead = undefined));
  return outboxRead;
}

const outboxGauge = (name: string, help: string, pick: (s: OutboxStats) => number) =>
  new client.Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      const stats = await readOutbox();
      if (stats) this.set(pick(stats));
    },
  });

outboxGauge('gateway_usage_outbox_entries', 'Usage events in the Redis outbox, not yet in Postgres (the same value from every worker process)', (s) => s.entries);
outboxGauge('gateway_usage_outbox_pending', 'Usage outbox entries a drainer has read and not yet acknowledged', (s) => s.pending);
outboxGauge('gateway_usage_outbox_oldest_seconds', 'Age of the oldest usage event waiting in the outbox (0 when empty)', (s) => s.oldestAgeSeconds);
outboxGauge('gateway_usage_dead_letters', 'Usage outbox entries Postgres refused, kept in the dead-letter stream for an operator', (s) => s.deadLetters);
