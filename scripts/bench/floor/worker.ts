import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { Agent, request } from 'undici';

/** The floor's worker (see web.ts): forwards each job to the simulator and publishes the answer. */
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `${process.env.REDIS_PREFIX ?? 'gwbench'}:floor`;
const upstream = `${process.env.FLOOR_UPSTREAM ?? 'http://127.0.0.1:8091'}/v1/chat/completions`;
const pub = new Redis(redisUrl, { maxRetriesPerRequest: null });
const agent = new Agent({ keepAliveTimeout: 30_000, connections: null });

const worker = new Worker<{ body: { model: string }; replyTo: string }>(
  'floor',
  async (job) => {
    const { body, replyTo } = job.data;
    const r = await request(upstream, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...body, model: 'sim-chat-1' }) });
    const result = (await r.body.json()) as { model: string };
    result.model = body.model;
    await pub.publish(replyTo, JSON.stringify({ id: job.id, result }));
  },
  { connection: new Redis(redisUrl, { maxRetriesPerRequest: null }), prefix, concurrency: 256, removeOnComplete: { count: 0 }, removeOnFail: { count: 0 } },
);
worker.on('error', (err) => console.error(err));
process.on('SIGTERM', () => void worker.close().then(() => process.exit(0)));
