import http from 'http';
import { ownRedis } from './processes';
import { createApp } from '../../api/app';
import { expressClasses } from '../../shared/http/express-classes';
import { closeContext, createContext, type AppContext } from '../../api/context';
import { Queues } from '../../shared/queues/queues';
import { createRedis } from '../../shared/redis/connection';

export interface ProducerDownPod {
  base: string;
  ctx: AppContext;
  /** Kills the producer's redis-server: from now on every enqueue meets a Redis outage. */
  stopProducer(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A web pod whose leases, caches and reply channel live on the shared Redis, while its producer
 * connection (the one it adds jobs on) goes to a redis-server of the test's own, which the test
 * kills: Redis lost between the lane lease and the enqueue. Ready to enqueue until `stopProducer`.
 */
export async function producerDownPod(name: string): Promise<ProducerDownPod> {
  const redis = await ownRedis();
  const ctx = await createContext(`${name}-${Date.now()}`);
  const shared = ctx.queues;
  const producer = createRedis('producer', redis.url);
  ctx.queues = new Queues(producer);
  const app = createApp(ctx);
  // req and res built as the web pod builds them (api/server.ts)
  const server = http.createServer(expressClasses(app), app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  await ctx.queues.warm(); // as createContext does
  return {
    base: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    ctx,
    stopProducer: () => redis.stop(),
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await ctx.queues.close().catch(() => undefined);
      producer.disconnect();
      ctx.queues = shared;
      await closeContext(ctx);
      await redis.stop();
    },
  };
}
