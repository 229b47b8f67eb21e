import Joi from 'joi';

/**
 * Configuration is read from the environment once, validated, and frozen.
 * Every problem is reported together so an operator fixes them in one go.
 */
export interface Config {
  nodeEnv: string;
  port: number;
  adminPort: number;
  databaseUrl: string;
  redisUrl: string;
  /** Prefix of every Redis key, queue and channel; wrapped in a hash tag for Redis Cluster. */
  redisPrefix: string;
  logLevel: string;
  /** 32+ char secret: encrypts provider keys at rest and signs URLs. */
  secretKey: string;
  /** Default worker concurrency per lane; operator-tunable per pool later. */
  chatInteractiveConcurrency: number;
  chatBackgroundConcurrency: number;
  /** Per-request deadline for chat-style requests, in ms. */
  requestTimeoutMs: number;
  /** Lane lease time-to-live; a dead pod's leases expire after this. */
  leaseTtlMs: number;
  /** How often a pod checks BullMQ for replies it may have missed. */
  replyPollMs: number;
  /** BullMQ lock duration for jobs; a crashed worker's job is failed after ~this. */
  jobLockMs: number;
  /** Decision models (`POST /v1/systemone`): worker concurrency, deadline, raw body cap, slow-body timeout. */
  systemoneConcurrency: number;
  systemoneTimeoutMs: number;
  systemoneMaxBodyBytes: number;
  systemoneBodyTimeoutMs: number;
  podId: string;
}

const schema = Joi.object({
  NODE_ENV: Joi.string().valid('development', 'production', 'test').default('development'),
  PORT: Joi.number().port().default(8080),
  ADMIN_PORT: Joi.number().port().default(8081),
  DATABASE_URL: Joi.string().uri({ scheme: ['postgres', 'postgresql'] }).required(),
  REDIS_URL: Joi.string().uri({ scheme: ['redis', 'rediss'] }).required(),
  REDIS_PREFIX: Joi.string().pattern(/^[a-z0-9_-]+$/i).default('gw'),
  LOG_LEVEL: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
  SECRET_KEY: Joi.string().min(32).required(),
  CHAT_INTERACTIVE_CONCURRENCY: Joi.number().integer().min(1).default(64),
  CHAT_BACKGROUND_CONCURRENCY: Joi.number().integer().min(1).default(8),
  REQUEST_TIMEOUT_MS: Joi.number().integer().min(100).default(600_000),
  LEASE_TTL_MS: Joi.number().integer().min(1000).default(30_000),
  REPLY_POLL_MS: Joi.number().integer().min(50).default(1000),
  JOB_LOCK_MS: Joi.number().integer().min(500).default(30_000),
  SYSTEMONE_CONCURRENCY: Joi.number().integer().min(1).default(16),
  SYSTEMONE_TIMEOUT_MS: Joi.number().integer().min(100).default(120_000),
  SYSTEMONE_MAX_BODY_BYTES: Joi.number().integer().min(1024).default(8 * 1024 * 1024),
  SYSTEMONE_BODY_TIMEOUT_MS: Joi.number().integer().min(50).default(30_000),
  POD_ID: Joi.string().optional(),
}).unknown(true);

let cached: Config | undefined;

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const { value, error } = schema.validate(env, { abortEarly: false, convert: true });
  if (error) {
    const lines = error.details.map((d) => `  - ${d.message}`).join('\n');
    throw new ConfigError(`Invalid configuration:\n${lines}`);
  }
  return Object.freeze({
    nodeEnv: value.NODE_ENV,
    port: value.PORT,
    adminPort: value.ADMIN_PORT,
    databaseUrl: value.DATABASE_URL,
    redisUrl: value.REDIS_URL,
    redisPrefix: value.REDIS_PREFIX,
    logLevel: value.LOG_LEVEL,
    secretKey: value.SECRET_KEY,
    chatInteractiveConcurrency: value.CHAT_INTERACTIVE_CONCURRENCY,
    chatBackgroundConcurrency: value.CHAT_BACKGROUND_CONCURRENCY,
    requestTimeoutMs: value.REQUEST_TIMEOUT_MS,
    leaseTtlMs: value.LEASE_TTL_MS,
    replyPollMs: value.REPLY_POLL_MS,
    jobLockMs: value.JOB_LOCK_MS,
    systemoneConcurrency: value.SYSTEMONE_CONCURRENCY,
    systemoneTimeoutMs: value.SYSTEMONE_TIMEOUT_MS,
    systemoneMaxBodyBytes: value.SYSTEMONE_MAX_BODY_BYTES,
    systemoneBodyTimeoutMs: value.SYSTEMONE_BODY_TIMEOUT_MS,
    podId: value.POD_ID ?? `${require('os').hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
  });
}

/** The process-wide configuration; exits with every problem printed when invalid. */
export function config(): Config {
  if (!cached) {
    try {
      cached = loadConfig();
    } catch (err) {
      if (err instanceof ConfigError) {
        process.stderr.write(`${err.message}\n`);
        process.exit(1);
      }
      throw err;
    }
  }
  return cached;
}

/** Tests and the embedded starter set the environment, then reset the cache. */
export function resetConfig(): void {
  cached = undefined;
}
