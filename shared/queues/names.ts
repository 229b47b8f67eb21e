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

export function chatQueue(lane: 'interactive' | 'background'): 'chat-interactive' | 'chat-background' {
  return lane === 'background' ? 'chat-background' : 'chat-interactive';
}
