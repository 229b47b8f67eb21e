import { config } from '../config/env';
import { fnv1a } from '../fnv1a';
import { ALL_QUEUES, EXPRESS_TAGS, expressQueueOf, expressShardName, isSharded, shardName, type QueueName } from './names';

/** How many shards a queue has: QUEUE_SHARDS_CHAT for the chat queues, QUEUE_SHARDS_EMBEDDINGS for embeddings, 1 for every other queue. */
export function shardCount(queue: QueueName): number {
  if (!isSharded(queue)) return 1;
  return queue === 'embeddings' ? config().queueShardsEmbeddings : config().queueShardsChat;
}

/** The BullMQ queue names of a queue's shards, shard 0 first. */
export function shardsOf(queue: QueueName): string[] {
  return Array.from({ length: shardCount(queue) }, (_, i) => shardName(queue, i));
}

/** The BullMQ names of a queue's express shards (as many as the queue has shards), none for a queue without an express queue. */
export function expressShardsOf(queue: QueueName): string[] {
  const express = expressQueueOf(queue);
  return express ? Array.from({ length: shardCount(queue) }, (_, i) => expressShardName(express, i)) : [];
}

/** The express shard a job of this id goes to (picked from its id as its shard is), if the queue has express shards. */
export function expressShardForJob(queue: QueueName, jobId: string): string | undefined {
  const express = expressQueueOf(queue);
  return express && expressShardName(express, shardIndexOf(jobId, shardCount(queue)));
}

/** Every BullMQ queue a queue's jobs can be in: its shards, then its express shards (names.ts). */
export function bullQueuesOf(queue: QueueName): string[] {
  return [...shardsOf(queue), ...expressShardsOf(queue)];
}

/**
 * The shard a job goes to, from its id (the request id): random ids spread evenly over the shards,
 * and any pod finds a job's shard from its id alone (a cancel or a reply recovery from a pod that did
 * not add the job).
 */
export function shardIndexOf(jobId: string, count: number): number {
  return count <= 1 ? 0 : fnv1a(jobId) % count;
}

/** The BullMQ queue name of the shard that holds (or will hold) a job. */
export function shardForJob(queue: QueueName, jobId: string): string {
  return shardName(queue, shardIndexOf(jobId, shardCount(queue)));
}

/**
 * A worker process's concurrency for one queue split over the queue's shards (one BullMQ worker
 * each): the same share for every shard, `total / count` rounded up. Shards get equal numbers of jobs
 * (ids hash evenly), so they need equal capacity: a shard with one slot fewer drains slower under
 * saturation and its backlog (and the wait of a quiet org's job that lands there) keeps growing. The
 * process may so run up to `count - 1` jobs more than `total`; a multiple of `count` avoids that.
 */
export function shardConcurrency(total: number, count: number): number {
  return Math.max(1, Math.ceil(total / count));
}

/** Every express shard's name → its queue and index (names.ts, EXPRESS_TAGS). */
const EXPRESS_POSITIONS = new Map<string, { queue: QueueName; index: number; express: true }>(
  Object.entries(EXPRESS_TAGS).flatMap(([queue, tags]) => tags.map((_, i) => [expressShardName(tags[0], i), { queue: queue as QueueName, index: i, express: true as const }] as const)),
);

/**
 * The declared queue a BullMQ queue name (a shard's, the queue's own or an express shard's) belongs
 * to, and the shard's index (an express shard says `express`).
 */
export function shardPosition(bullName: string): { queue: QueueName; index: number; express?: true } | undefined {
  if ((ALL_QUEUES as string[]).includes(bullName)) return { queue: bullName as QueueName, index: 0 };
  const express = EXPRESS_POSITIONS.get(bullName);
  if (express) return express;
  const m = /^(.+)-(\d+)$/.exec(bullName);
  return m && isSharded(m[1]) ? { queue: m[1] as QueueName, index: Number(m[2]) } : undefined;
}
