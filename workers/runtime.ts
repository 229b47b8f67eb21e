import { createRedis, type RedisClient } from '../shared/redis/connection';
import { ALL_QUEUES, type QueueName } from '../shared/queues/names';
import { ReplyPublisher } from '../shared/queues/reply-publisher';
import { CancelListener } from '../shared/queues/cancel';
import { config } from '../shared/config/env';

/** What every worker pool in a process shares: connections, the reply publisher, the cancel listener. */
export interface WorkerRuntime {
  redis: RedisClient;
  sub: RedisClient;
  bull: RedisClient;
  replies: ReplyPublisher;
  cancels: CancelListener;
}

/** `queues`: the queues this process works, whose cancel channels it follows. */
export async function createWorkerRuntime(queues: readonly QueueName[] = ALL_QUEUES): Promise<WorkerRuntime> {
  // A worker's turn often ends a job and starts the next (the result's script, the pool's settle, a
  // chunk's publish): corked, those leave in one write (REDIS_CORK `all` or `workers`).
  const cork = config().redisCork !== 'off';
  const redis = createRedis('command', undefined, cork);
  const sub = createRedis('subscriber', undefined, cork);
  const bull = createRedis('worker', undefined, cork);
  const cancels = new CancelListener(sub);
  await cancels.start(queues);
  // a stream's first message is written at once only while few jobs run here (reply-publisher.ts)
  return { redis, sub, bull, replies: new ReplyPublisher(redis, () => cancels.running), cancels };
}

export async function closeWorkerRuntime(rt: WorkerRuntime): Promise<void> {
  rt.sub.disconnect();
  rt.redis.disconnect();
  rt.bull.disconnect();
}
