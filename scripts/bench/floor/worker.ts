import { Worker } from 'bullmq';
import { floorRedis } from './redis';
import { Agent, request } from 'undici';
import { originAndPath } from '../../../workers/providers/http';

/**
 * The floor's worker (see web.ts): forwards each job to the upstream and publishes the answer, or a
 * stream's reads one message each and then an end mark.
 */
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `${process.env.REDIS_PREFIX ?? 'gwbench'}:floor`;
const upstream = process.env.FLOOR_UPSTREAM ?? 'http://127.0.0.1:8091';
/** The chat model name sent upstream (the simulator's); empty: the caller's, unchanged (the peer harness's stub reads it). */
const upstreamModel = process.env.FLOOR_UPSTREAM_MODEL ?? 'sim-chat-1';
const pub = floorRedis(redisUrl);
const agent = new Agent({ keepAliveTimeout: 30_000, connections: null });
/** FLOOR_PLAIN_OBJECTS=0: undici's request(url) and a spread body, as the floor called before 2026-11-27's seventh session. */
const plainObjects = process.env.FLOOR_PLAIN_OBJECTS !== '0';

/** As the gateway's worker calls: the agent's own request, and no spread followed by a key (shared/merged.ts). */
function plainCall(path: string, body: object, model: string) {
  const { origin, path: at } = originAndPath(`${upstream}${path}`);
  const sent: Record<string, unknown> = { model: '', ...body };
  sent.model = model;
  return agent.request({ origin, path: at, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(sent) });
}

const worker = new Worker<{ path: string; body: { model: string; stream?: boolean }; replyTo: string }>(
  'floor',
  async (job) => {
    const { path, body, replyTo } = job.data;
    const model = path === '/v1/chat/completions' ? upstreamModel || body.model : body.model;
    const r = plainObjects ? await plainCall(path, body, model) : await request(`${upstream}${path}`, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...body, model }) });
    if (body.stream) {
      for await (const chunk of r.body) await pub.publish(replyTo, JSON.stringify({ id: job.id, chunk: String(chunk) }));
      await pub.publish(replyTo, JSON.stringify({ id: job.id, end: true }));
      return;
    }
    const result = (await r.body.json()) as { model: string };
    result.model = body.model;
    await pub.publish(replyTo, JSON.stringify({ id: job.id, result }));
  },
  { connection: floorRedis(redisUrl), prefix, concurrency: 256, removeOnComplete: { count: 0 }, removeOnFail: { count: 0 } },
);
worker.on('error', (err) => console.error(err));
process.on('SIGTERM', () => void worker.close().then(() => process.exit(0)));
