import { config } from '../config/env';
import { hashTagOf } from '../queues/names';

const p = () => config().redisPrefix;

/** Hash tag of usage outbox stream `i`; stream 0 keeps the single-node name. */
const outboxTag = (i: number) => (i === 0 ? 'usage' : `usage-${i}`);

/** The outbox hash tag of a reply channel (`usage` for a channel of another shape). */
const tagOfReply = (replyChannel: string) => /\{(usage(?:-\d+)?)\}/.exec(replyChannel)?.[1] ?? 'usage';

/**
 * Every Redis key and channel is built here. Keys that one Lua script, MULTI or pipeline touches
 * together share a `{hash tag}`, so a Redis Cluster places them in one slot:
 * - each queue has its own tag (`<prefix>:{<queue>}`), so the queues spread over the shards; each
 *   shard of a sharded queue has its own tag too (shared/queues/names.ts, SHARD_TAGS);
 * - a lane lease is in its org's slot (`{<org id>}`);
 * - usage outbox stream `i` and the reply channels paired with it share `{usage-i}` (a worker adds
 *   the usage event and publishes the result in one script);
 * - the cache epoch and its channel share `{cache}`.
 * Channels a script does not need are sharded pub/sub channels too (SSUBSCRIBE/SPUBLISH): a message
 * goes to the one shard that owns the channel's slot instead of to every node.
 */
export const keys = {
  /** BullMQ prefix of one queue (or queue shard); its braces keep the queue's keys in one slot, apart from other queues. */
  bullPrefix: (queue: string) => `${p()}:{${hashTagOf(queue)}}`,
  /** Bumped on any change to keys, orgs, plans or models; caches compare it on every request. */
  cacheEpoch: () => `${p()}:{cache}:epoch`,
  /** Sharded channel announcing each epoch bump (see shared/cache/epoch.ts); in the epoch's slot. */
  cacheChannel: () => `${p()}:{cache}:changed`,
  /**
   * Who serves an express queue (shared/queues/express.ts): `workers` (sorted set, member
   * `<slots>|<process id>`, score its expiry) and `pods` (member the pod id, score its expiry), in the
   * express queue's own slot apart from its jobs.
   */
  express: (expressQueue: string, which: 'workers' | 'pods') => `${p()}:{express:${expressQueue}}:${which}`,
  /** A batch paced after a refusal (shared/batches/pacing.ts pauseBatch): present, with its TTL, while no runner may send it a new line. */
  batchPause: (batchId: string) => `${p()}:batch:{${batchId}}:pause`,
  lease: (orgId: string, pool: string, lane: string) => `${p()}:lease:{${orgId}}:${pool}:${lane}`,
  /** A pod's sharded reply channel paired with usage outbox stream `shard` (one per stream, see ReplyHub). */
  replyChannel: (podId: string, shard = 0) => `${p()}:{${outboxTag(shard)}}:reply:${podId}`,
  /** Sharded cancel channel of one queue (or queue shard), in its slot; the workers of that shard subscribe to it. */
  cancelChannel: (queue: string) => `${p()}:{${hashTagOf(queue)}}:cancel`,
  /** Sharded channel of MCP `notifications/cancelled` (api/routes/mcp/cancels.ts): every web pod that served an MCP call subscribes. */
  mcpCancelChannel: () => `${p()}:{mcp}:cancel`,
  /** The chat job (`<queue> <job id>`) running a background response (api/routes/responses/background.ts), for its cancel from any pod. */
  backgroundJob: (responseId: string) => `${p()}:bg:{${responseId}}`,
  /** Sharded channel of background responses' cancels (api/routes/responses/background-cancel.ts): every web pod that runs one subscribes. */
  backgroundCancelChannel: () => `${p()}:{bg-cancel}:cancel`,
  /**
   * Set (no TTL) by the clock's first sweep of lapsed background leases: while it is missing, Redis's
   * data is new (a first start, or a restart that lost it) and the pods have not yet renewed their
   * leases, so the sweep fails nothing (shared/responses/retention.ts).
   */
  backgroundSweepArmed: () => `${p()}:bg:sweep-armed`,
  /**
   * What resumes a background response on another pod when its own is lost (a hash: `s` the request
   * and its kept identity, sealed; `n` how many times it was resumed; api/routes/responses/background-resume.ts).
   */
  backgroundResume: (responseId: string) => `${p()}:bg:{${responseId}}:resume`,
  /** When the clock first found a resumable background response's lease lapsed (ms): no pod resuming it in a while fails it (shared/responses/retention.ts). */
  backgroundLapsed: (responseId: string) => `${p()}:bg:{${responseId}}:lapsed`,
  /** The events of a background response made with `stream: true` (api/routes/responses/background-stream.ts): a stream, one entry an event. */
  backgroundEvents: (responseId: string) => `${p()}:bg:{${responseId}}:events`,
  /** A cached answer (api/dispatch/response-cache.ts): its request's digest (org, route and body). */
  responseCache: (digest: string) => `${p()}:rc:{${digest}}`,
  /** One API key's MCP cancels kept for calls not yet started (api/routes/mcp/kept-cancels.ts): a sorted set, member a digest of the JSON-RPC id, score its expiry. */
  mcpKeptCancels: (keyId: string) => `${p()}:{mcp-cancel:${keyId}}:kept`,
  /**
   * Ids an Anthropic-native upstream handed one org on the platform's shared workspace (containers,
   * produced files, thread messages; shared/tenancy/handed-out-ids.ts): a sorted set, member
   * `<kind>:<id>`, score its expiry (ms); in the org's slot.
   */
  handedOutIds: (orgId: string) => `${p()}:ids:{${orgId}}`,
  /** Beside handedOutIds, in its slot: a hash, member to the id of the provider whose workspace made it (absent: recorded by an older worker). */
  handedOutWorkspaces: (orgId: string) => `${p()}:idws:{${orgId}}`,
  switches: () => `${p()}:switches`,
  switchesChannel: () => `${p()}:switches:changed`,
  /** Usage outbox stream `i` of config().usageOutboxStreams: workers add each request's usage event with its result, UsageDrainers move it to Postgres. */
  usageOutbox: (i = 0) => `${p()}:{${outboxTag(i)}}:outbox`,
  /** Outbox entries Postgres refused on their own (kept for an operator, never retried); one per stream. */
  usageDeadLetters: (i = 0) => `${p()}:{${outboxTag(i)}}:dead`,
  /** Every outbox stream with its dead-letter stream. */
  usageStreams: () =>
    Array.from({ length: config().usageOutboxStreams }, (_, i) => ({ stream: keys.usageOutbox(i), deadLetters: keys.usageDeadLetters(i) })),
  /** The outbox stream paired with a reply channel: the one with the channel's hash tag. */
  usageOutboxFor: (replyChannel: string) => `${p()}:{${tagOfReply(replyChannel)}}:outbox`,
  /** Web search period counters of an org (`all`, `platform`, `member:<user id>`); one slot per org. */
  searchCount: (orgId: string, period: string, which: string) => `${p()}:search:{${orgId}}:${period}:${which}`,
  /** A batch line's search counted and not yet charged nor given back (shared/search/gate-script.ts); same slot as the counters. */
  searchHeld: (orgId: string, requestId: string) => `${p()}:search:{${orgId}}:held:${requestId}`,
  /** Web search abuse-limit window of an org (same slot as its counters). */
  searchRate: (orgId: string) => `${p()}:search:{${orgId}}:rate`,
  /**
   * Routing state of one deployment of a model pool (`health` hash, `inflight` zset, `rpm:<minute>` and
   * `tpm:<minute>` counters); every deployment of a pool shares the pool's slot, so one script weighs them all.
   */
  poolDeployment: (poolId: string, deployment: string, what: string) => `${p()}:pool:{${poolId}}:${deployment}:${what}`,
  /**
   * Spending, rate windows and reservations of an org's keys and projects (shared/limits/): every key
   * in the org's slot, so one script decides a key and its project together.
   * `which`: `kbud:<key id>:<period>`, `pbud:<project id>:<period>` (hash: spent, reserved),
   * `rpm:<key id>:<minute>`, `tpm:<key id>:<minute>`, `res` (hash: request id → reservation),
   * `resx` (zset: request id → expiry ms).
   */
  limits: (orgId: string, which: string) => `${p()}:limits:{${orgId}}:${which}`,
  /** Failed authentications of one client IP in the current window (shared/auth/auth-failures.ts). */
  authFailures: (ip: string) => `${p()}:authfail:${ip}`,
  /** Invitations an org's owners made on the dashboard in the current hour (api/dashboard/members-page.ts). */
  invitationsMade: (orgId: string) => `${p()}:invitations:${orgId}`,
  /** A dashboard form's one-time token, once acted on (api/web/once.ts): a reload that sends it again is refused. */
  formSent: (token: string) => `${p()}:web:once:${token}`,
  /** Who decided a request's fate first: the worker ('delivered', with its usage) or the pod ('abandoned'); in the slot of the request's reply channel and outbox stream. */
  usageFate: (replyChannel: string, requestId: string) => `${p()}:{${tagOfReply(replyChannel)}}:fate:${requestId}`,
  /** A usage event held back because no pod listened for the result; billed if a pod delivers it later. */
  usageHeld: (replyChannel: string, requestId: string) => `${p()}:{${tagOfReply(replyChannel)}}:held:${requestId}`,
  /** A finished request's answer kept for a pod that missed the reply (shared/queues/reply-store.ts); in the slot of its reply channel. */
  replyResult: (replyChannel: string, requestId: string) => `${p()}:{${tagOfReply(replyChannel)}}:result:${requestId}`,
  /**
   * A reply channel's subscription epoch: raised by its pod whenever its subscriber was away, before
   * it listens again (shared/queues/reply-hub.ts); in the channel's slot. A worker keeps a stream's
   * chunks only when it moved since the job was added (shared/queues/reply-store.ts).
   */
  replyEpoch: (replyChannel: string) => `${replyChannel}:epoch`,
};
