import Joi from 'joi';
import { cidrList } from '../net/ip-ranges';
import { MAX_QUEUE_SHARDS } from '../queues/names';

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
  /** REDIS_CLUSTER_NODES (`host:port,...`): when set, every connection is an ioredis Cluster and REDIS_URL is unused. */
  redisClusterNodes: string[];
  /** Usage outbox streams (USAGE_OUTBOX_STREAMS; default 1 on one node, 6 on a cluster), each in its own slot. */
  usageOutboxStreams: number;
  /** Shards of each chat queue (QUEUE_SHARDS_CHAT; default 1 on one node, 3 on a cluster), each its own BullMQ queue and slot (shared/queues/shards.ts). */
  queueShardsChat: number;
  /** Shards of the embeddings queue (QUEUE_SHARDS_EMBEDDINGS; default 1 on one node, 3 on a cluster). */
  queueShardsEmbeddings: number;
  /** Prefix of every Redis key, queue and channel; wrapped in a hash tag for Redis Cluster. */
  redisPrefix: string;
  /**
   * REDIS_CORK: which processes write a connection's commands of one event-loop turn in one socket
   * write (shared/redis/cork.ts): `all` (default), `workers` (the worker processes' connections
   * only), `off`.
   */
  redisCork: 'workers' | 'all' | 'off';
  /**
   * REDIS_CORK_UNTIL: when a corked connection writes what it holds (shared/redis/cork.ts):
   * `iteration` (default), at the end of the event-loop iteration; `tick`, after each callback.
   */
  redisCorkUntil: 'iteration' | 'tick';
  logLevel: string;
  /** 32+ char secret: encrypts provider keys at rest and signs URLs. */
  secretKey: string;
  /** Default worker concurrency per lane; operator-tunable per pool later. */
  chatInteractiveConcurrency: number;
  chatBackgroundConcurrency: number;
  /**
   * Express slots of a chat worker process (CHAT_EXPRESS_CONCURRENCY, default 8; 0: none): an extra
   * BullMQ worker on the `chat-interactive-express` queue, which only the jobs of organizations with
   * fewer than `expressMaxInFlight` other jobs in flight in the lane reach (shared/queues/express.ts, docs/scaling.md).
   */
  chatExpressConcurrency: number;
  /**
   * The most jobs an organization may have in flight in a lane, the new one included, for the new one
   * to go to the express slots (EXPRESS_MAX_IN_FLIGHT; shared/queues/express.ts, docs/scaling.md).
   */
  expressMaxInFlight: number;
  /** Embeddings pool worker concurrency (embeddings and rerank jobs), per process. */
  embeddingsConcurrency: number;
  /** Search pool worker concurrency per process. */
  searchConcurrency: number;
  /** Deadline of one web search (or page fetch) job. */
  searchTimeoutMs: number;
  /** Deadline of one native web fetch of a page (its redirects included); a page that gets no answer is told at it. */
  webFetchTimeoutMs: number;
  /** Per-request deadline for chat-style requests, in ms. */
  requestTimeoutMs: number;
  /** Model pools (docs/routing.md): upstream attempts per request, over deployments and fallbacks (POOL_MAX_ATTEMPTS, 3). */
  poolMaxAttempts: number;
  /** An attempt that gets no response headers within this fails retryably (POOL_FIRST_BYTE_TIMEOUT_MS, 60 s). */
  poolFirstByteTimeoutMs: number;
  /**
   * The most bytes of one upstream answer a worker reads (UPSTREAM_MAX_RESPONSE_BYTES, 256 MiB), streamed
   * or not: past it the answer is a 502 `upstream_error` (mid-stream: the dialect's error event), not a
   * worker holding it all (workers/providers/http.ts).
   */
  upstreamMaxResponseBytes: number;
  /** Cooldown after a failure without Retry-After: base x 2^(consecutive failures - 1), capped (POOL_BACKOFF_BASE_MS 500, POOL_BACKOFF_MAX_MS 30 s). */
  poolBackoffBaseMs: number;
  poolBackoffMaxMs: number;
  /** A pool of one waits at most this before trying its only deployment again; a longer Retry-After is answered to the caller (POOL_RETRY_WAIT_MAX_MS, 2 s). */
  poolRetryWaitMaxMs: number;
  /** An attempt's in-flight entry (a deployment's concurrency count) lives this long unless its worker renews it, every third of it, while the attempt runs: a dead worker's attempt stops counting after this (POOL_INFLIGHT_LEASE_MS, 30 s). */
  poolInflightLeaseMs: number;
  /** No deployment is picked and no fallback tried this close to a request's deadline: the answer must still reach the pod (POOL_DEADLINE_MARGIN_MS, 200). */
  poolDeadlineMarginMs: number;
  /** Lane lease time-to-live; a dead pod's leases expire after this. */
  leaseTtlMs: number;
  leaseKeepMs: number;
  /** How often a pod checks BullMQ for replies it may have missed. */
  replyPollMs: number;
  /** Fair reading on a web pod under overload (api/fair-read.ts): loop delay (ms) that starts it, 0 off; longest pause; open requests never paused. */
  fairRead: { lagMs: number; maxPauseMs: number; minOpen: number };
  /** Worker processes take fewer interactive jobs while their loop lags (workers/concurrency-governor.ts): lag (ms) that starts it, 0 off; smallest fraction kept. */
  workerGovernor: { lagMs: number; minFactor: number };
  /** BullMQ lock duration for jobs; a crashed worker's job is failed after ~this. */
  jobLockMs: number;
  /** Decision models (`POST /v1/systemone`): worker concurrency, deadline, raw body cap, slow-body timeout. */
  systemoneConcurrency: number;
  systemoneTimeoutMs: number;
  systemoneMaxBodyBytes: number;
  systemoneBodyTimeoutMs: number;
  podId: string;
  /** Images (docs/images.md): worker concurrency per lane, storage, signed URLs, URL uploads. */
  imagesInteractiveConcurrency: number;
  imagesBackgroundConcurrency: number;
  imageStorage: 'local' | 's3';
  imageStorageDir: string;
  imageS3: { bucket?: string; region: string; endpoint?: string; accessKeyId?: string; secretAccessKey?: string; forcePathStyle: boolean };
  imageUrlTtlSeconds: number;
  imageUploadMaxBytes: number;
  /** A chat request's image URLs downloaded for an inlining deployment add up to this many bytes at most (workers/providers/inline-images.ts). */
  imageUrlInlineMaxBytes: number;
  /** A chat request's image URL downloads, together, take at most this long (a server trickling bytes to many URLs cannot hold the job to its deadline). */
  imageUrlInlineTimeoutMs: number;
  /** Files and batches (docs/batches.md): org defaults (a plan or org entitlement overrides them) and the runner's pace. */
  batches: {
    /** OpenAI's Batch API: requests in an input file, its bytes (OpenAI's own limits: 50,000 and 200 MB). */
    maxLines: number;
    maxFileBytes: number;
    /** Anthropic's Message Batches: requests in a batch, its body's bytes (Anthropic's own: 100,000 or 256 MB). */
    messageBatchMaxRequests: number;
    messageBatchMaxBytes: number;
    maxInProgress: number;
    priceMultiplier: number;
    linesInFlight: number;
    windowMs: number;
    fileRetentionDays: number;
    pollMs: number;
    claimStaleMs: number;
  };
  imageFetchTimeoutMs: number;
  /** CIDRs an operator trusts despite the SSRF guard (default none); see docs/images.md. */
  imageFetchAllowCidrs: string[];
  /** Extra CA certificate (PEM file) trusted for URL uploads, e.g. an internal PKI. */
  imageFetchCaFile?: string;
  /**
   * Public base URL of the web API, the only origin of image URLs and signed redirects (never the
   * request's Host). Required when NODE_ENV=production; elsewhere `http://localhost:<PORT>`.
   */
  publicBaseUrl: string;
  /** MCP_ALLOWED_ORIGINS: browser origins besides PUBLIC_BASE_URL's that may call `/mcp` (`*`: any); others are 403 (api/routes/mcp/origin.ts). */
  mcpAllowedOrigins: string[];
  /**
   * MCP_PROGRESS_INTERVAL_MS: how often a tool call that asked for progress (`_meta.progressToken`)
   * gets a `notifications/progress` while it runs; the first one turns the answer into an SSE stream
   * (api/routes/mcp/progress.ts).
   */
  mcpProgressIntervalMs: number;
  /**
   * MESSAGES_PING_INTERVAL_MS: a messages-dialect stream that has written nothing for this long writes
   * Anthropic's keepalive `ping` event, so an idle proxy does not cut a long silence (an upstream
   * reasoning, a slow first token); 0 never (api/sse-keepalive.ts).
   */
  messagesPingIntervalMs: number;
  /** SMTP_URL (`smtp://` or `smtps://`, user and password in the URL): invitations are mailed through it; unset, the page shows the link to send. */
  smtpUrl?: string;
  /** MAIL_FROM: the From of the gateway's mail (`Gateway <noreply@example.com>`); required with SMTP_URL. */
  mailFrom?: string;
  /** The payment processor's name; it is the path segment of its management family (`/admin/v1/<name>/*`). */
  paymentsProcessorName: string;
  /** Audio uploads are spooled here; web and audio worker processes must share it (docs/audio.md). */
  audioSpoolDir: string;
  /** The whole multipart body must arrive within this (408 body_read_timeout). */
  audioBodyReadTimeoutMs: number;
  /** Overall deadline of a transcription, from arrival to answer (504 audio_deadline_exceeded). */
  audioDeadlineMs: number;
  /** Gateway-wide ceiling of concurrent transcriptions (503 audio_at_capacity). */
  audioMaxConcurrent: number;
  /** Per-org concurrent transcriptions when neither plan nor org sets `audio:default`. */
  audioOrgConcurrency: number;
  /** Audio worker concurrency per process. */
  audioWorkerConcurrency: number;
  /** Usage outbox entries read by a drainer and not acknowledged for this long are claimed by another. */
  usageClaimIdleMs: number;
  /**
   * A usage drainer reads the outbox at most this often (USAGE_BATCH_INTERVAL_MS, 200 ms): what came
   * meanwhile is one INSERT. Longer batches cost Postgres less per request (docs/benchmark.md, issue 29);
   * an event reaches Postgres at most this much later.
   */
  usageBatchIntervalMs: number;
  /** Days of `usage_events` and of `request_logs` kept (day partitions older are dropped; rollups stay). */
  usageEventsRetentionDays: number;
  requestLogRetentionDays: number;
  /** Days a stored response (responses dialect) is kept, as OpenAI keeps them; 0: until deleted. */
  storedResponsesRetentionDays: number;
  /** A process that has not finished draining this long after SIGTERM exits anyway (e.g. Redis is gone). */
  shutdownGraceMs: number;
  /** Per-pod caches (shared/tenancy/directory.ts): entries at most, age at most, and how long "unknown" is remembered. */
  cacheMaxEntries: number;
  cacheMaxAgeMs: number;
  cacheNegativeTtlMs: number;
  /** Failed authentications per client IP and window before 429 `too_many_failed_authentications`. */
  authFailureLimit: number;
  authFailureWindowSeconds: number;
  /** `/metrics` of the web process: its own port (open there), and/or a bearer token on the public port. */
  metricsPort?: number;
  metricsToken?: string;
  /** Express `trust proxy` (TRUST_PROXY: hop count, `loopback`, CIDR list...): whose X-Forwarded-For gives the client IP. */
  trustProxy: boolean | number | string;
  /** Every other route's whole body must arrive within this (408 body_read_timeout). */
  bodyReadTimeoutMs: number;
  /** Node server timeouts of every HTTP process (shared/http/server-options.ts). */
  httpHeadersTimeoutMs: number;
  httpRequestTimeoutMs: number;
  httpKeepAliveTimeoutMs: number;
  /** Worker threads that count tokens of large inputs off the event loop (shared/tokenizer/pool.ts). */
  tokenizerThreads: number;
  /** A token count that takes longer than this is abandoned and the request refused. */
  tokenCountTimeoutMs: number;
  /** Concurrent `POST /v1/messages/count_tokens` requests per org (its lane, `tokenize:count_tokens`). */
  countTokensOrgConcurrency: number;
  /** Native search interception (docs/native-search.md): model turns, and searches plus fetches, per request. */
  nativeMaxTurns: number;
  nativeMaxSearches: number;
  /** Web sign-in (dashboard and console): failed attempts per email and address in 15 minutes; session length. */
  webSignInMaxAttempts: number;
  /** Failed web sign-ins per client address in 15 minutes, whatever the emails (the ceiling across emails). */
  webSignInMaxPerAddress: number;
  /** Invitations an organization's owners may create on the dashboard in an hour (each may send a mail). */
  webInvitationsPerHour: number;
  webSessionHours: number;
}

/** TRUST_PROXY as express takes it: unset/false → false, true, a hop count, or addresses/CIDRs/names. */
const trustProxy = (v: string): boolean | number | string =>
  v === '' || v === 'false' ? false : v === 'true' ? true : /^\d+$/.test(v) ? Number(v) : v;

/** The entries of a comma-separated setting, trimmed, empty ones dropped. */
const commaList = (v: string): string[] => v.split(',').map((s) => s.trim()).filter(Boolean);

const schema = Joi.object({
  NODE_ENV: Joi.string().valid('development', 'production', 'test').default('development'),
  PORT: Joi.number().port().default(8080),
  ADMIN_PORT: Joi.number().port().default(8081),
  DATABASE_URL: Joi.string().uri({ scheme: ['postgres', 'postgresql'] }).required(),
  REDIS_CLUSTER_NODES: Joi.string()
    .pattern(/^\s*[^\s,:]+:\d{1,5}\s*(,\s*[^\s,:]+:\d{1,5}\s*)*$/)
    .optional()
    .messages({ 'string.pattern.base': '"REDIS_CLUSTER_NODES" must be host:port entries separated by commas' }),
  REDIS_URL: Joi.string()
    .uri({ scheme: ['redis', 'rediss'] })
    .when('REDIS_CLUSTER_NODES', { is: Joi.exist(), then: Joi.optional(), otherwise: Joi.required() }),
  USAGE_OUTBOX_STREAMS: Joi.number().integer().min(1).max(64).optional(),
  QUEUE_SHARDS_CHAT: Joi.number().integer().min(1).max(MAX_QUEUE_SHARDS).optional(),
  QUEUE_SHARDS_EMBEDDINGS: Joi.number().integer().min(1).max(MAX_QUEUE_SHARDS).optional(),
  REDIS_PREFIX: Joi.string().pattern(/^[a-z0-9_-]+$/i).default('gw'),
  REDIS_CORK: Joi.string().valid('all', 'workers', 'off').default('all'),
  REDIS_CORK_UNTIL: Joi.string().valid('iteration', 'tick').default('iteration'),
  LOG_LEVEL: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
  SECRET_KEY: Joi.string().min(32).required().custom((v: string) => {
    if (new Set(v).size < 10) throw new Error('weak');
    return v;
  }, 'strong secret'),
  CHAT_INTERACTIVE_CONCURRENCY: Joi.number().integer().min(1).default(64),
  CHAT_BACKGROUND_CONCURRENCY: Joi.number().integer().min(1).default(8),
  CHAT_EXPRESS_CONCURRENCY: Joi.number().integer().min(0).max(1000).default(8),
  EXPRESS_MAX_IN_FLIGHT: Joi.number().integer().min(1).max(1000).default(2),
  EMBEDDINGS_CONCURRENCY: Joi.number().integer().min(1).default(32),
  SEARCH_CONCURRENCY: Joi.number().integer().min(1).default(32),
  SEARCH_TIMEOUT_MS: Joi.number().integer().min(1000).default(30000),
  WEB_FETCH_TIMEOUT_MS: Joi.number().integer().min(100).default(10_000),
  REQUEST_TIMEOUT_MS: Joi.number().integer().min(100).default(600_000),
  POOL_MAX_ATTEMPTS: Joi.number().integer().min(1).max(20).default(3),
  POOL_FIRST_BYTE_TIMEOUT_MS: Joi.number().integer().min(100).default(60_000),
  UPSTREAM_MAX_RESPONSE_BYTES: Joi.number().integer().min(1024).default(256 * 1024 * 1024),
  POOL_BACKOFF_BASE_MS: Joi.number().integer().min(0).default(500),
  POOL_BACKOFF_MAX_MS: Joi.number().integer().min(0).default(30_000),
  POOL_RETRY_WAIT_MAX_MS: Joi.number().integer().min(0).default(2_000),
  POOL_INFLIGHT_LEASE_MS: Joi.number().integer().min(300).default(30_000),
  POOL_DEADLINE_MARGIN_MS: Joi.number().integer().min(0).max(60_000).default(200),
  LEASE_TTL_MS: Joi.number().integer().min(1000).default(30_000),
  LEASE_KEEP_MS: Joi.number().integer().min(0).max(1000).default(25),
  REPLY_POLL_MS: Joi.number().integer().min(50).default(1000),
  FAIR_READ_LAG_MS: Joi.number().integer().min(0).max(10_000).default(5),
  FAIR_READ_MAX_PAUSE_MS: Joi.number().integer().min(10).max(30_000).default(2_000),
  FAIR_READ_MIN_OPEN: Joi.number().integer().min(0).default(8),
  WORKER_LAG_MS: Joi.number().integer().min(0).max(10_000).default(5),
  WORKER_MIN_CONCURRENCY_FRACTION: Joi.number().min(0.01).max(1).default(0.05),
  JOB_LOCK_MS: Joi.number().integer().min(500).default(30_000),
  SYSTEMONE_CONCURRENCY: Joi.number().integer().min(1).default(16),
  SYSTEMONE_TIMEOUT_MS: Joi.number().integer().min(100).default(120_000),
  SYSTEMONE_MAX_BODY_BYTES: Joi.number().integer().min(1024).default(8 * 1024 * 1024),
  SYSTEMONE_BODY_TIMEOUT_MS: Joi.number().integer().min(50).default(30_000),
  POD_ID: Joi.string().optional(),
  IMAGES_INTERACTIVE_CONCURRENCY: Joi.number().integer().min(1).default(8),
  IMAGES_BACKGROUND_CONCURRENCY: Joi.number().integer().min(1).default(2),
  IMAGE_STORAGE: Joi.string().valid('local', 's3').default('local'),
  IMAGE_STORAGE_DIR: Joi.string().default('.data/images'),
  IMAGE_S3_BUCKET: Joi.string().when('IMAGE_STORAGE', { is: 's3', then: Joi.required() }),
  IMAGE_S3_REGION: Joi.string().default('us-east-1'),
  IMAGE_S3_ENDPOINT: Joi.string().uri({ scheme: ['http', 'https'] }).optional(),
  IMAGE_S3_ACCESS_KEY_ID: Joi.string().optional(),
  IMAGE_S3_SECRET_ACCESS_KEY: Joi.string().optional(),
  IMAGE_S3_FORCE_PATH_STYLE: Joi.boolean().default(false),
  IMAGE_URL_TTL_SECONDS: Joi.number().integer().min(10).max(86_400).default(300),
  IMAGE_UPLOAD_MAX_BYTES: Joi.number().integer().min(1024).default(10 * 1024 * 1024),
  IMAGE_URL_INLINE_MAX_BYTES: Joi.number().integer().min(1024).default(20 * 1024 * 1024),
  IMAGE_URL_INLINE_TIMEOUT_MS: Joi.number().integer().min(100).default(30_000),
  BATCH_MAX_LINES: Joi.number().integer().min(1).default(50_000),
  BATCH_MAX_FILE_BYTES: Joi.number().integer().min(1024).default(200 * 1024 * 1024),
  MESSAGE_BATCH_MAX_REQUESTS: Joi.number().integer().min(1).default(100_000),
  MESSAGE_BATCH_MAX_BYTES: Joi.number().integer().min(1024).default(256 * 1024 * 1024),
  BATCH_MAX_IN_PROGRESS: Joi.number().integer().min(1).default(20),
  BATCH_PRICE_MULTIPLIER: Joi.number().min(0).max(1).default(0.5),
  BATCH_LINES_IN_FLIGHT: Joi.number().integer().min(1).default(8),
  BATCH_WINDOW_MS: Joi.number().integer().min(1000).default(24 * 3600 * 1000),
  BATCH_FILE_RETENTION_DAYS: Joi.number().integer().min(1).default(30),
  BATCH_POLL_MS: Joi.number().integer().min(10).default(500),
  BATCH_CLAIM_STALE_MS: Joi.number().integer().min(1000).default(30_000),
  IMAGE_FETCH_TIMEOUT_MS: Joi.number().integer().min(100).default(10_000),
  IMAGE_FETCH_ALLOW_CIDRS: Joi.string()
    .allow('')
    .default('')
    .custom((v: string) => {
      cidrList(commaList(v)); // throws on a malformed entry
      return v;
    }, 'CIDR list'),
  IMAGE_FETCH_CA_FILE: Joi.string().optional(),
  PUBLIC_BASE_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .when('NODE_ENV', { is: 'production', then: Joi.required(), otherwise: Joi.optional() }),
  MCP_PROGRESS_INTERVAL_MS: Joi.number().integer().min(100).max(30_000).default(5_000),
  MESSAGES_PING_INTERVAL_MS: Joi.alternatives(Joi.number().valid(0), Joi.number().integer().min(100).max(300_000)).default(10_000),
  MCP_ALLOWED_ORIGINS: Joi.string()
    .allow('')
    .default('')
    .custom((v: string) => {
      for (const o of commaList(v)) if (o !== '*' && !/^https?:\/\/[^/?#]+\/?$/i.test(o)) throw new Error(`'${o}' is not an origin (scheme://host[:port]) or *`);
      return v;
    }, 'origin list'),
  SMTP_URL: Joi.string().uri({ scheme: ['smtp', 'smtps'] }).optional(),
  MAIL_FROM: Joi.string().max(320).pattern(/@/).when('SMTP_URL', { is: Joi.exist(), then: Joi.required(), otherwise: Joi.optional() }),
  PAYMENTS_PROCESSOR_NAME: Joi.string().pattern(/^[a-z][a-z0-9-]{1,31}$/).default('stripe'),
  AUDIO_SPOOL_DIR: Joi.string().default(require('path').join(require('os').tmpdir(), 'gateway-audio-spool')),
  AUDIO_BODY_READ_TIMEOUT_MS: Joi.number().integer().min(100).default(120_000),
  AUDIO_DEADLINE_MS: Joi.number().integer().min(500).default(600_000),
  AUDIO_MAX_CONCURRENT: Joi.number().integer().min(1).default(64),
  AUDIO_ORG_CONCURRENCY: Joi.number().integer().min(0).default(4),
  AUDIO_WORKER_CONCURRENCY: Joi.number().integer().min(1).default(16),
  USAGE_CLAIM_IDLE_MS: Joi.number().integer().min(100).default(30_000),
  USAGE_BATCH_INTERVAL_MS: Joi.number().integer().min(0).max(5_000).default(200),
  USAGE_EVENTS_RETENTION_DAYS: Joi.number().integer().min(2).default(400),
  REQUEST_LOG_RETENTION_DAYS: Joi.number().integer().min(1).default(30),
  STORED_RESPONSES_RETENTION_DAYS: Joi.number().integer().min(0).default(30),
  SHUTDOWN_GRACE_MS: Joi.number().integer().min(100).default(30_000),
  CACHE_MAX_ENTRIES: Joi.number().integer().min(100).default(10_000),
  CACHE_MAX_AGE_MS: Joi.number().integer().min(100).default(30_000),
  CACHE_NEGATIVE_TTL_MS: Joi.number().integer().min(0).default(5_000),
  AUTH_FAILURE_LIMIT: Joi.number().integer().min(1).default(30),
  AUTH_FAILURE_WINDOW_SECONDS: Joi.number().integer().min(1).default(60),
  METRICS_PORT: Joi.number().port().optional(),
  METRICS_TOKEN: Joi.string().min(16).optional(),
  TRUST_PROXY: Joi.string().allow('').default(''),
  BODY_READ_TIMEOUT_MS: Joi.number().integer().min(50).default(30_000),
  HTTP_HEADERS_TIMEOUT_MS: Joi.number().integer().min(100).default(20_000),
  /** Default: the longest route body deadline plus 10 s (computed below). */
  HTTP_REQUEST_TIMEOUT_MS: Joi.number().integer().min(100).optional(),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: Joi.number().integer().min(100).default(65_000),
  TOKENIZER_THREADS: Joi.number().integer().min(1).default(1),
  TOKEN_COUNT_TIMEOUT_MS: Joi.number().integer().min(50).default(10_000),
  COUNT_TOKENS_ORG_CONCURRENCY: Joi.number().integer().min(1).default(4),
  NATIVE_MAX_TURNS: Joi.number().integer().min(1).max(50).default(5),
  NATIVE_MAX_SEARCHES: Joi.number().integer().min(0).max(100).default(10),
  WEB_SIGNIN_MAX_ATTEMPTS: Joi.number().integer().min(1).default(5),
  WEB_SIGNIN_MAX_PER_ADDRESS: Joi.number().integer().min(1).default(20),
  WEB_INVITATIONS_PER_HOUR: Joi.number().integer().min(1).default(20),
  WEB_SESSION_HOURS: Joi.number().min(0.1).max(720).default(12),
}).unknown(true);

let cached: Config | undefined;

const SECRET_HINT = 'set SECRET_KEY to a random value of 32+ characters, e.g. `openssl rand -hex 32`';

/** What is wrong with one variable, and what fixes it. */
function problemOf(d: Joi.ValidationErrorItem): string {
  const name = String(d.path[0] ?? d.context?.key ?? '');
  if (name === 'SECRET_KEY') {
    if (d.type === 'any.required') return `SECRET_KEY is not set (${SECRET_HINT})`;
    return `SECRET_KEY is too weak: it needs 32+ characters and 10+ different ones (${SECRET_HINT})`;
  }
  return `${d.message} (set ${name})`;
}

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const { value, error } = schema.validate(env, { abortEarly: false, convert: true });
  if (error) {
    // One line, every problem in it, each naming the variable that fixes it.
    const problems = [...new Set(error.details.map(problemOf))];
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  return Object.freeze({
    nodeEnv: value.NODE_ENV,
    port: value.PORT,
    adminPort: value.ADMIN_PORT,
    databaseUrl: value.DATABASE_URL,
    redisUrl: value.REDIS_URL ?? '',
    redisClusterNodes: value.REDIS_CLUSTER_NODES ? commaList(value.REDIS_CLUSTER_NODES) : [],
    usageOutboxStreams: value.USAGE_OUTBOX_STREAMS ?? (value.REDIS_CLUSTER_NODES ? 6 : 1),
    queueShardsChat: value.QUEUE_SHARDS_CHAT ?? (value.REDIS_CLUSTER_NODES ? 3 : 1),
    queueShardsEmbeddings: value.QUEUE_SHARDS_EMBEDDINGS ?? (value.REDIS_CLUSTER_NODES ? 3 : 1),
    redisPrefix: value.REDIS_PREFIX,
    redisCork: value.REDIS_CORK,
    redisCorkUntil: value.REDIS_CORK_UNTIL,
    logLevel: value.LOG_LEVEL,
    secretKey: value.SECRET_KEY,
    chatInteractiveConcurrency: value.CHAT_INTERACTIVE_CONCURRENCY,
    chatBackgroundConcurrency: value.CHAT_BACKGROUND_CONCURRENCY,
    chatExpressConcurrency: value.CHAT_EXPRESS_CONCURRENCY,
    expressMaxInFlight: value.EXPRESS_MAX_IN_FLIGHT,
    embeddingsConcurrency: value.EMBEDDINGS_CONCURRENCY,
    searchConcurrency: value.SEARCH_CONCURRENCY,
    searchTimeoutMs: value.SEARCH_TIMEOUT_MS,
    webFetchTimeoutMs: value.WEB_FETCH_TIMEOUT_MS,
    requestTimeoutMs: value.REQUEST_TIMEOUT_MS,
    poolMaxAttempts: value.POOL_MAX_ATTEMPTS,
    poolFirstByteTimeoutMs: value.POOL_FIRST_BYTE_TIMEOUT_MS,
    upstreamMaxResponseBytes: value.UPSTREAM_MAX_RESPONSE_BYTES,
    poolBackoffBaseMs: value.POOL_BACKOFF_BASE_MS,
    poolBackoffMaxMs: value.POOL_BACKOFF_MAX_MS,
    poolRetryWaitMaxMs: value.POOL_RETRY_WAIT_MAX_MS,
    poolInflightLeaseMs: value.POOL_INFLIGHT_LEASE_MS,
    poolDeadlineMarginMs: value.POOL_DEADLINE_MARGIN_MS,
    leaseTtlMs: value.LEASE_TTL_MS,
    leaseKeepMs: value.LEASE_KEEP_MS,
    replyPollMs: value.REPLY_POLL_MS,
    workerGovernor: { lagMs: value.WORKER_LAG_MS, minFactor: value.WORKER_MIN_CONCURRENCY_FRACTION },
    fairRead: { lagMs: value.FAIR_READ_LAG_MS, maxPauseMs: value.FAIR_READ_MAX_PAUSE_MS, minOpen: value.FAIR_READ_MIN_OPEN },
    jobLockMs: value.JOB_LOCK_MS,
    paymentsProcessorName: value.PAYMENTS_PROCESSOR_NAME,
    audioSpoolDir: value.AUDIO_SPOOL_DIR,
    audioBodyReadTimeoutMs: value.AUDIO_BODY_READ_TIMEOUT_MS,
    audioDeadlineMs: value.AUDIO_DEADLINE_MS,
    audioMaxConcurrent: value.AUDIO_MAX_CONCURRENT,
    audioOrgConcurrency: value.AUDIO_ORG_CONCURRENCY,
    audioWorkerConcurrency: value.AUDIO_WORKER_CONCURRENCY,
    usageClaimIdleMs: value.USAGE_CLAIM_IDLE_MS,
    usageBatchIntervalMs: value.USAGE_BATCH_INTERVAL_MS,
    usageEventsRetentionDays: value.USAGE_EVENTS_RETENTION_DAYS,
    requestLogRetentionDays: value.REQUEST_LOG_RETENTION_DAYS,
    storedResponsesRetentionDays: value.STORED_RESPONSES_RETENTION_DAYS,
    shutdownGraceMs: value.SHUTDOWN_GRACE_MS,
    bodyReadTimeoutMs: value.BODY_READ_TIMEOUT_MS,
    httpHeadersTimeoutMs: value.HTTP_HEADERS_TIMEOUT_MS,
    httpRequestTimeoutMs: Math.max(
      value.HTTP_HEADERS_TIMEOUT_MS,
      value.HTTP_REQUEST_TIMEOUT_MS ??
        Math.max(value.BODY_READ_TIMEOUT_MS, value.AUDIO_BODY_READ_TIMEOUT_MS, value.SYSTEMONE_BODY_TIMEOUT_MS) + 10_000,
    ),
    httpKeepAliveTimeoutMs: value.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    tokenizerThreads: value.TOKENIZER_THREADS,
    tokenCountTimeoutMs: value.TOKEN_COUNT_TIMEOUT_MS,
    countTokensOrgConcurrency: value.COUNT_TOKENS_ORG_CONCURRENCY,
    nativeMaxTurns: value.NATIVE_MAX_TURNS,
    nativeMaxSearches: value.NATIVE_MAX_SEARCHES,
    webSignInMaxAttempts: value.WEB_SIGNIN_MAX_ATTEMPTS,
    webSignInMaxPerAddress: value.WEB_SIGNIN_MAX_PER_ADDRESS,
    webInvitationsPerHour: value.WEB_INVITATIONS_PER_HOUR,
    webSessionHours: value.WEB_SESSION_HOURS,
    systemoneConcurrency: value.SYSTEMONE_CONCURRENCY,
    systemoneTimeoutMs: value.SYSTEMONE_TIMEOUT_MS,
    systemoneMaxBodyBytes: value.SYSTEMONE_MAX_BODY_BYTES,
    systemoneBodyTimeoutMs: value.SYSTEMONE_BODY_TIMEOUT_MS,
    podId: value.POD_ID ?? `${require('os').hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
    imagesInteractiveConcurrency: value.IMAGES_INTERACTIVE_CONCURRENCY,
    imagesBackgroundConcurrency: value.IMAGES_BACKGROUND_CONCURRENCY,
    imageStorage: value.IMAGE_STORAGE,
    imageStorageDir: value.IMAGE_STORAGE_DIR,
    imageS3: {
      bucket: value.IMAGE_S3_BUCKET,
      region: value.IMAGE_S3_REGION,
      endpoint: value.IMAGE_S3_ENDPOINT,
      accessKeyId: value.IMAGE_S3_ACCESS_KEY_ID,
      secretAccessKey: value.IMAGE_S3_SECRET_ACCESS_KEY,
      forcePathStyle: value.IMAGE_S3_FORCE_PATH_STYLE,
    },
    imageUrlTtlSeconds: value.IMAGE_URL_TTL_SECONDS,
    imageUploadMaxBytes: value.IMAGE_UPLOAD_MAX_BYTES,
    imageUrlInlineMaxBytes: value.IMAGE_URL_INLINE_MAX_BYTES,
    imageUrlInlineTimeoutMs: value.IMAGE_URL_INLINE_TIMEOUT_MS,
    batches: {
      maxLines: value.BATCH_MAX_LINES,
      maxFileBytes: value.BATCH_MAX_FILE_BYTES,
      messageBatchMaxRequests: value.MESSAGE_BATCH_MAX_REQUESTS,
      messageBatchMaxBytes: value.MESSAGE_BATCH_MAX_BYTES,
      maxInProgress: value.BATCH_MAX_IN_PROGRESS,
      priceMultiplier: value.BATCH_PRICE_MULTIPLIER,
      linesInFlight: value.BATCH_LINES_IN_FLIGHT,
      windowMs: value.BATCH_WINDOW_MS,
      fileRetentionDays: value.BATCH_FILE_RETENTION_DAYS,
      pollMs: value.BATCH_POLL_MS,
      claimStaleMs: value.BATCH_CLAIM_STALE_MS,
    },
    imageFetchTimeoutMs: value.IMAGE_FETCH_TIMEOUT_MS,
    imageFetchAllowCidrs: commaList(String(value.IMAGE_FETCH_ALLOW_CIDRS)),
    imageFetchCaFile: value.IMAGE_FETCH_CA_FILE,
    publicBaseUrl: (value.PUBLIC_BASE_URL ?? `http://localhost:${value.PORT}`).replace(/\/+$/, ''),
    mcpAllowedOrigins: commaList(String(value.MCP_ALLOWED_ORIGINS)),
    mcpProgressIntervalMs: value.MCP_PROGRESS_INTERVAL_MS,
    messagesPingIntervalMs: value.MESSAGES_PING_INTERVAL_MS,
    smtpUrl: value.SMTP_URL,
    mailFrom: value.MAIL_FROM,
    cacheMaxEntries: value.CACHE_MAX_ENTRIES,
    cacheMaxAgeMs: value.CACHE_MAX_AGE_MS,
    cacheNegativeTtlMs: value.CACHE_NEGATIVE_TTL_MS,
    authFailureLimit: value.AUTH_FAILURE_LIMIT,
    authFailureWindowSeconds: value.AUTH_FAILURE_WINDOW_SECONDS,
    metricsPort: value.METRICS_PORT,
    metricsToken: value.METRICS_TOKEN,
    trustProxy: trustProxy(String(value.TRUST_PROXY)),
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
