import client from 'prom-client';
import { LabelCache, registry } from '../../shared/metrics';

/** Per-deployment routing metrics of the chat workers (docs/routing.md). */
export const deploymentAttempts = new client.Counter({
  name: 'gateway_deployment_attempts_total',
  help: 'Upstream attempts per model pool deployment, by outcome (ok, failed, rejected: answered with a non-retryable error)',
  labelNames: ['model', 'deployment', 'outcome'] as const,
  registers: [registry],
});

export const deploymentFailures = new client.Counter({
  name: 'gateway_deployment_failures_total',
  help: 'Retryable upstream failures per deployment, by class (connect, timeout, status_429, status_5xx, stream, other); never billed',
  labelNames: ['model', 'deployment', 'class'] as const,
  registers: [registry],
});

export const deploymentLatency = new client.Histogram({
  name: 'gateway_deployment_attempt_duration_seconds',
  help: 'Duration of successful upstream attempts per deployment',
  labelNames: ['model', 'deployment'] as const,
  buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers: [registry],
});

export const deploymentCooldownUntil = new client.Gauge({
  name: 'gateway_deployment_cooldown_until_seconds',
  help: 'Epoch seconds until which this process last put the deployment in cooldown (0: healthy at its last verdict here)',
  labelNames: ['model', 'deployment'] as const,
  registers: [registry],
});

export const requestAttempts = new client.Histogram({
  name: 'gateway_request_upstream_attempts',
  help: 'Upstream attempts per chat-style request (1: no retry)',
  labelNames: ['model'] as const,
  buckets: [1, 2, 3, 4, 5, 8],
  registers: [registry],
});

/** The label objects of one deployment's series, made once (a metric update is then no object per request). */
export interface DeploymentSeries {
  labels: { model: string; deployment: string };
  ok: { model: string; deployment: string; outcome: string };
  /** This process last set the deployment's cooldown gauge to 0: a success need not set it again. */
  cooldownClear: boolean;
}

/** Past this many deployments' series, the caches start over (deployments come and go with the catalog). */
const MAX_SERIES = 5_000;
const series = new LabelCache<DeploymentSeries>(MAX_SERIES);
const modelLabels = new LabelCache<{ model: string }>(MAX_SERIES);

/** The cached label objects of a model's deployment (routing metrics above). */
export function seriesOf(model: string, deployment: string): DeploymentSeries {
  const key = `${model}\u0000${deployment}`;
  return series.get(key) ?? series.keep(key, { labels: { model, deployment }, ok: { model, deployment, outcome: 'ok' }, cooldownClear: false });
}

/** One label object per model for requestAttempts. */
export function modelLabelsOf(model: string): { model: string } {
  return modelLabels.get(model) ?? modelLabels.keep(model, { model });
}
