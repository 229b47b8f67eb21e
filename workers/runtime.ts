import type { Redis } from 'ioredis';
import { createRedis } from '../shared/redis/connection';
import { ReplyPublisher } from '../shared/queues/reply-publisher';
import { CancelListener } from '../shared/queues/cancel';

/** What every worker pool in a process shares: connections, the reply publisher, the cancel listener. */
export interface WorkerRuntime {
  redis: Redis;
  sub: Redis;
  bull: Redis;
  replies: ReplyPublisher;
  cancels: CancelListener;
}

export async function createWorkerRuntime(): Promise<WorkerRuntime> {
  const redis = createRedis('command');
  const sub = createRedis('subscriber');
  const bull = createRedis('worker');
  const cancels = new CancelListener(sub);
  await cancels.start();
  return { redis, sub, bull, replies: new ReplyPublisher(redis), cancels };
}

export async function closeWorkerRuntime(rt: WorkerRuntime): Promise<void> {
  rt.sub.disconnect();
  rt.redis.disconnect();
  rt.bull.disconnect();
}
