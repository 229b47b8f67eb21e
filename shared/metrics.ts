import client from 'prom-client';

/** One Prometheus registry per process; each process type exposes it on `/metrics`. */
export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });

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

export const laneRejections = new client.Counter({
  name: 'gateway_lane_rejections_total',
  help: 'Requests refused at a lane cap',
  labelNames: ['pool', 'lane'] as const,
  registers: [registry],
});
