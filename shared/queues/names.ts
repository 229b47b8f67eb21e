/**
 * The one place that declares every queue. Names are stored in Redis: treat them as frozen.
 * A pool is what a worker process runs (`node dist/workers/main.js <pool>`); each pool owns queues.
 */
export const POOLS = {
  chat: ['chat-interactive', 'chat-background'],
  embeddings: ['embeddings'],
  images: ['images-interactive', 'images-background'],
  audio: ['audio'],
  systemone: ['systemone'],
  search: ['search'],
} as const;

export type PoolName = keyof typeof POOLS;
export type QueueName = (typeof POOLS)[PoolName][number];

export const ALL_QUEUES: QueueName[] = Object.values(POOLS).flat() as QueueName[];

export function isPoolName(name: string): name is PoolName {
  return Object.prototype.hasOwnProperty.call(POOLS, name);
}

/**
 * Sharded queues (QUEUE_SHARDS_CHAT for the chat queues, QUEUE_SHARDS_EMBEDDINGS): shard `i` is a BullMQ queue of its own, named `<queue>-<i>`
 * (shard 0 keeps the queue's own name, so existing Redis data and a rolling deploy keep working),
 * with the hash tag listed here at index `i`. The tags are chosen, not hashed by chance: for every
 * count n up to MAX_QUEUE_SHARDS, the first n tags' slots lie in n different equal parts of the
 * 16,384 slots, which is how `redis-cli --cluster create` hands slots to n masters; so n shards on a
 * cluster of n masters (or of n / k masters) put one shard (k shards) on each master
 * (test/unit/queue-shards.test.ts checks it). Stored in Redis: frozen, append only.
 */
export const SHARD_TAGS = {
  'chat-interactive': ['chat-interactive', 'chat-interactive-1.2', 'chat-interactive-2', 'chat-interactive-3.11', 'chat-interactive-4.41', 'chat-interactive-5.41', 'chat-interactive-6.11', 'chat-interactive-7.11'],
  'chat-background': ['chat-background', 'chat-background-1.1', 'chat-background-2.11', 'chat-background-3.19', 'chat-background-4.3', 'chat-background-5.3', 'chat-background-6.11', 'chat-background-7.11'],
  embeddings: ['embeddings', 'embeddings-1.3', 'embeddings-2.1', 'embeddings-3.41', 'embeddings-4.1', 'embeddings-5.41', 'embeddings-6.42', 'embeddings-7.2'],
} as const satisfies Partial<Record<QueueName, readonly string[]>>;

export type ShardedQueue = keyof typeof SHARD_TAGS;

/**
 * Express queues (shared/queues/express.ts): a queue's second set of BullMQ queues, for the jobs of
 * organizations with few jobs in flight in the lane (EXPRESS_MAX_IN_FLIGHT), served by slots of their own that a flooding
 * organization's jobs never reach. Sharded like the queue (as many shards as it has): shard `i` is
 * named `<express>-<i>` (shard 0 `<express>`), with the hash tag listed here at index `i`, chosen as
 * SHARD_TAGS are (n shards on n masters, for every n up to MAX_QUEUE_SHARDS). Stored in Redis: frozen.
 */
export const EXPRESS_TAGS = {
  'chat-interactive': ['chat-interactive-express', 'chat-interactive-express-1.0', 'chat-interactive-express-2.23', 'chat-interactive-express-3.22', 'chat-interactive-express-4.63', 'chat-interactive-express-5.40', 'chat-interactive-express-6.2', 'chat-interactive-express-7.43'],
} as const satisfies Partial<Record<QueueName, readonly string[]>>;

/** A queue's express queue (its shard 0's name), for a queue that has one. */
export const EXPRESS_QUEUES: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(EXPRESS_TAGS).map(([q, tags]) => [q, tags[0]]));

/** The express queue (shard 0's BullMQ name) of a queue that has one. */
export function expressQueueOf(queue: string): string | undefined {
  return Object.prototype.hasOwnProperty.call(EXPRESS_QUEUES, queue) ? EXPRESS_QUEUES[queue] : undefined;
}

/** The BullMQ name of shard `i` of a queue's express queue. */
export function expressShardName(express: string, i: number): string {
  return i === 0 ? express : `${express}-${i}`;
}

export const MAX_QUEUE_SHARDS = 8;

export function isSharded(queue: string): queue is ShardedQueue {
  return Object.prototype.hasOwnProperty.call(SHARD_TAGS, queue);
}

/** The BullMQ queue name of shard `i` of a queue: the queue's own name for shard 0. */
export function shardName(queue: QueueName, i: number): string {
  return i === 0 ? queue : `${queue}-${i}`;
}

const TAG_OF_SHARD = new Map<string, string>([
  ...Object.entries(SHARD_TAGS).flatMap(([queue, tags]) => tags.map((tag, i) => [shardName(queue as QueueName, i), tag] as const)),
  ...Object.values(EXPRESS_TAGS).flatMap((tags) => tags.map((tag, i) => [expressShardName(tags[0], i), tag] as const)),
]);

/** The hash tag of a BullMQ queue (a queue or one of its shards): its slot on a cluster. */
export function hashTagOf(bullName: string): string {
  return TAG_OF_SHARD.get(bullName) ?? bullName;
}

export function chatQueue(lane: 'interactive' | 'background'): 'chat-interactive' | 'chat-background' {
  return lane === 'background' ? 'chat-background' : 'chat-interactive';
}
