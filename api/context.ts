import type { RedisClient } from '../shared/redis/connection';
import { config } from '../shared/config/env';
import { createRedis } from '../shared/redis/connection';
import { closeTokenizerPool } from '../shared/tokenizer/pool';
import { Directory } from '../shared/tenancy/directory';
import { Catalog } from '../shared/catalog/catalog';
import { LeaseManager } from '../shared/lanes/leases';
import { Queues } from '../shared/queues/queues';
import { ReplyHub } from '../shared/queues/reply-hub';
import { ExpressShare } from '../shared/queues/express';
import { SwitchBoard } from '../shared/switches/switches';
import { addMetricSources } from '../shared/metrics';
import { FairRead } from './fair-read';

/**
 * Everything a web pod holds: connections, caches, lane leases, queues and its reply channel.
 * Each app instance has its own, so tests can run two pods side by side.
 */
export interface AppContext {
  podId: string;
  redis: RedisClient;
  sub: RedisClient;
  directory: Directory;
  catalog: Catalog;
  leases: LeaseManager;
  queues: Queues;
  replies: ReplyHub;
  /** The pod's share of the express slots (shared/queues/express.ts). */
  express: ExpressShare;
  switches: SwitchBoard;
  /** Pauses over-share organizations' connections while the pod lags (api/fair-read.ts). */
  fairRead: FairRead;
  /** Unregisters this context's metric sources. */
  dropMetrics: () => void;
}

export interface ContextOptions {
  /**
   * Whether this process takes a share of the express slots (shared/queues/express.ts): web pods do;
   * the batch runner does not (a batch line waits for nobody), so it is not counted among the pods
   * that share them.
   */
  expressSlots?: boolean;
}

export async function createContext(podId = config().podId, opts: ContextOptions = {}): Promise<AppContext> {
  const cfg = config();
  const redis = createRedis('command');
  const sub = createRedis('subscriber');
  const queueConn = createRedis('producer'); // adds jobs: fails fast while Redis is away
  const directory = new Directory(redis);
  const catalog = new Catalog();
  directory.onChange(() => catalog.invalidate());
  const queues = new Queues(queueConn);
  await queues.warm(); // every queue's object made now, not at its first job (a Redis outage then fails fast)
  await directory.follow(sub);
  const replies = new ReplyHub(sub, queues, podId, cfg.replyPollMs, redis);
  await replies.start();
  const switches = new SwitchBoard(redis, sub);
  await switches.start();
  const leases = new LeaseManager(redis, cfg.leaseTtlMs, cfg.leaseKeepMs);
  const express = new ExpressShare(redis, podId, cfg.expressMaxInFlight);
  if (opts.expressSlots !== false) await express.start();
  const dropMetrics = addMetricSources(queues, { held: () => leases.heldCounts() });
  const fairRead = new FairRead(cfg.fairRead);
  fairRead.start();
  return { podId, redis, sub, directory, catalog, leases, queues, replies, express, switches, fairRead, dropMetrics };
}

export async function closeContext(ctx: AppContext): Promise<void> {
  ctx.dropMetrics();
  ctx.fairRead.stop();
  ctx.leases.stop();
  await ctx.express.stop();
  ctx.switches.stop();
  await ctx.replies.stop();
  await ctx.queues.close();
  ctx.sub.disconnect();
  ctx.redis.disconnect();
  await closeTokenizerPool();
}
