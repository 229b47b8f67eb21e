import path from 'path';
import { spawn, type ChildProcess } from 'child_process';
import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { waitFor } from '../../helpers/wait';
import { kill, spawnWeb, spawnWorker } from '../../helpers/processes';
import { startOwnRedis, type OwnRedis } from '../../helpers/own-redis';
import { freePort } from '../../../scripts/services/free-port';
import { batchUsage, chatLines, jsonl, outputOf, uploadBatchFile } from './helpers';

/** The batch runner (dist/workers/batch/main.js) as its own process, waiting until it reports started. */
async function spawnBatchRunner(extraEnv: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.resolve(__dirname, '../../../workers/batch/main.js')], {
    env: { ...process.env, LOG_LEVEL: 'info', METRICS_PORT: String(await freePort()), ...extraEnv },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  if (!(await waitFor(() => out.includes('batchworker started'), 20_000, 100))) throw new Error('batch runner did not start');
  return child;
}

describe('batches survive a Redis restart (a Redis of the test own, without persistence): every line delivered and billed exactly once', function () {
  this.timeout(180_000);
  let redis: OwnRedis | undefined;
  const children: ChildProcess[] = [];
  beforeEach(resetSim);
  afterEach(async () => {
    for (const c of children.splice(0)) await kill(c);
    await redis?.stop();
  });

  it('Redis killed and started empty mid-batch: every line delivered once from Postgres state and billed exactly once', async () => {
    redis = await startOwnRedis();
    const extra = { REDIS_URL: redis.url, REPLY_POLL_MS: '200', BATCH_CLAIM_STALE_MS: '3000' };
    children.push(await spawnWorker('chat', extra, 'ignore'));
    const web = await spawnWeb(extra, 'ignore');
    children.push(web.child);
    children.push(await spawnBatchRunner(extra));
    const o = await buildOrg(env().redis);
    const openai = new OpenAI({ apiKey: o.key, baseURL: `${web.url}/v1`, maxRetries: 0 });
    env().sim.knobs.set('sim-chat-1', { delayMs: 200 });
    const n = 40;
    const b = await openai.batches.create({ input_file_id: await uploadBatchFile(openai, jsonl(chatLines(n, 'r'))), endpoint: '/v1/chat/completions', completion_window: '24h' });
    // Redis goes away with lines both finished and in flight
    expect(await waitFor(async () => ((await openai.batches.retrieve(b.id)).request_counts?.completed ?? 0) >= 8, 60_000, 20)).to.equal(true);
    const upstreamBefore = env().sim.log.entries.length;
    await redis.stop();
    await new Promise((r) => setTimeout(r, 1000));
    await redis.start(); // empty: `--save ""`, no AOF
    const done = await waitFor(async () => {
      const x = await openai.batches.retrieve(b.id).catch(() => undefined);
      return x && ['completed', 'failed', 'expired', 'cancelled'].includes(x.status) ? x : undefined;
    }, 120_000, 300);
    expect(done, 'the batch ended after Redis came back').to.not.equal(undefined);
    expect(upstreamBefore, 'Redis went away before the batch finished').to.be.below(n);
    expect(done!.status).to.equal('completed');
    const errors = done!.error_file_id ? await (await openai.files.content(done!.error_file_id)).text() : '';
    expect(done!.request_counts, errors).to.deep.equal({ total: n, completed: n, failed: 0 });
    const output = await outputOf(openai, done!);
    expect(output.map((l) => l.custom_id).sort()).to.deep.equal(chatLines(n, 'r').map((l) => l.custom_id).sort());
    expect(output.every((l) => l.response.status_code === 200)).to.equal(true);
    // Billing: exactly once per line, and the delivered answer is the one billed. A line's usage is
    // written with the line in Postgres by the runner, so the wiped Redis took none of it.
    const billed = (await batchUsage(b.id)).map((u) => u.request_id);
    const lineOf = (id: string) => Number(/_(\d+)(?:_\d+)?$/.exec(id)![1]);
    expect(billed.map(lineOf).sort((x, y) => x - y), 'every line billed once').to.deep.equal(Array.from({ length: n }, (_, i) => i));
    expect([...billed].sort(), 'the delivered answers are the billed ones').to.deep.equal(output.map((l) => l.id).sort());
  });
});
