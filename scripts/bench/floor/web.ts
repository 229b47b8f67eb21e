import express from 'express';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';

/**
 * The bench's floor: the mandated stack with none of the gateway's features. An express app with
 * `express.json()` adds each chat request as a BullMQ job (job id chosen here, as the gateway does)
 * and answers when the worker's reply arrives on this process's pub/sub channel. No authentication,
 * validation, lanes, usage, metrics or logging: what is left is the cost of the architecture itself
 * (docs/benchmark.md). Not a server for anything else.
 */
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `${process.env.REDIS_PREFIX ?? 'gwbench'}:floor`;
const channel = `${prefix}:reply:${process.pid}`;
const queue = new Queue('floor', { connection: new Redis(redisUrl, { maxRetriesPerRequest: null }), prefix });
const sub = new Redis(redisUrl, { maxRetriesPerRequest: null });
const pending = new Map<string, express.Response>();
let next = 0;

sub.subscribe(channel).catch((err) => {
  console.error(err);
  process.exit(1);
});
sub.on('message', (_ch: string, message: string) => {
  const { id, result } = JSON.parse(message) as { id: string; result: unknown };
  const res = pending.get(id);
  if (!res) return;
  pending.delete(id);
  res.json(result);
});

const app = express();
app.use(express.json({ limit: '1mb' }));
app.get('/healthz', (_req, res) => void res.json({ ok: true }));
app.post('/v1/chat/completions', (req, res, nextFn) => {
  const id = `${process.pid}-${next++}`;
  pending.set(id, res);
  queue.add('chat', { body: req.body, replyTo: channel }, { jobId: id, attempts: 1, removeOnComplete: true, removeOnFail: true }).catch((err) => {
    pending.delete(id);
    nextFn(err);
  });
});
app.listen(Number(process.env.PORT ?? 8090), '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
