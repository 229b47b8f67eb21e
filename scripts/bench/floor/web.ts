import http from 'http';
import express from 'express';
import { Queue } from 'bullmq';
import { floorRedis } from './redis';
import { expressClasses } from '../../../shared/http/express-classes';
import { InFlightMap } from '../../../shared/in-flight-map';

/**
 * The bench's floor: the mandated stack with none of the gateway's features. An express app with
 * `express.json()` adds each request as a BullMQ job (job id chosen here, as the gateway does) and
 * answers when the worker's reply arrives on this process's pub/sub channel: one message with the
 * JSON answer, or for a stream each upstream read as it came and then an end mark. No
 * authentication, validation, lanes, usage, metrics or logging: what is left is the cost of the
 * architecture itself (docs/benchmark.md). Chat completions and embeddings; not a server for anything else.
 */
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `${process.env.REDIS_PREFIX ?? 'gwbench'}:floor`;
const channel = `${prefix}:reply:${process.pid}`;
const queue = new Queue('floor', { connection: floorRedis(redisUrl), prefix });
const sub = floorRedis(redisUrl);
// the responses awaiting their reply, as the gateway's pod holds them (shared/in-flight-map.ts);
// FLOOR_PENDING_MAP=1 keeps them in a Map, as the floor did before 2026-12-02's seventeenth session
const pending = process.env.FLOOR_PENDING_MAP === '1' ? new Map<string, express.Response>() : new InFlightMap<express.Response>();
let next = 0;

/** A reply message: the JSON answer (`result`), a piece of a stream (`chunk`) or its end (`end`). */
interface Reply {
  id: string;
  result?: unknown;
  chunk?: string;
  end?: true;
}

sub.subscribe(channel).catch((err) => {
  console.error(err);
  process.exit(1);
});
sub.on('message', (_ch: string, message: string) => {
  const m = JSON.parse(message) as Reply;
  const res = pending.get(m.id);
  if (!res) return;
  if (m.chunk !== undefined) {
    if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(m.chunk);
    return;
  }
  pending.delete(m.id);
  if (m.end) res.end();
  else res.json(m.result);
});

const app = express();
app.use(express.json({ limit: '1mb' }));
app.get('/healthz', (_req, res) => void res.json({ ok: true }));
for (const path of ['/v1/chat/completions', '/v1/embeddings']) {
  app.post(path, (req, res, nextFn) => {
    const id = `${process.pid}-${next++}`;
    pending.set(id, res);
    queue.add('call', { path, body: req.body, replyTo: channel }, { jobId: id, attempts: 1, removeOnComplete: true, removeOnFail: true }).catch((err) => {
      pending.delete(id);
      nextFn(err);
    });
  });
}
// req and res born with the app's prototypes, as the gateway's web pod builds them (shared/http/express-classes.ts);
// FLOOR_EXPRESS_CLASSES=0 serves with node's own classes, as the floor did before 2026-11-27's seventh session
const classes = process.env.FLOOR_EXPRESS_CLASSES === '0' ? {} : expressClasses(app);
http.createServer(classes, app).listen(Number(process.env.PORT ?? 8090), '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
