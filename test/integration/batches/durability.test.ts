import { spawn } from 'child_process';
import path from 'path';
import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim, startGateway } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { childChatWorker } from '../../helpers/child-worker';
import { config, resetConfig } from '../../../shared/config/env';
import { startBatchWorker } from '../../../workers/batch/main';
import { freePort } from '../../../scripts/services/free-port';
import { batchEnds, batchUsage, billedOncePerLine, chatLines as lines, jsonl, outputOf, parseJsonl, QUICK_POLL_MS, uploadBatchFile } from './helpers';

describe('batches survive process deaths: nothing lost, nothing billed twice', function () {
  this.timeout(120_000);
  let o: TestOrg;
  let openai: OpenAI;
  before(async () => {
    o = await buildOrg(env().redis);
    openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  beforeEach(resetSim);

  it('the batch runner killed with kill -9 mid-batch: another runner takes its claimed lines over', async () => {
    env().sim.knobs.set('sim-chat-1', { delayMs: 200 });
    const b = await openai.batches.create({ input_file_id: await uploadBatchFile(openai, jsonl(lines(40, 'k'))), endpoint: '/v1/chat/completions', completion_window: '24h' });
    const metricsPort = await freePort();
    const child = spawn(process.execPath, [path.resolve(__dirname, '../../../workers/batch/main.js')], {
      // LEASE_TTL_MS 2 s (not the run's 5 s): the lane leases of the lines it held in flight, which the
      // next runner's lines wait for, expire sooner after the kill
      env: { ...process.env, LOG_LEVEL: 'info', BATCH_CLAIM_STALE_MS: '1500', BATCH_POLL_MS: String(QUICK_POLL_MS), LEASE_TTL_MS: '2000', METRICS_PORT: String(metricsPort) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (d) => (out += String(d)));
    let worker: Awaited<ReturnType<typeof startBatchWorker>> | undefined;
    try {
      expect(await waitFor(() => out.includes('batchworker started'), 15_000)).to.equal(true);
      expect((await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).status, 'the batchworker serves its probes on METRICS_PORT').to.equal(200);
      // killed with lines both finished and in flight
      expect(await waitFor(async () => ((await openai.batches.retrieve(b.id)).request_counts?.completed ?? 0) >= 8, 30_000, 20)).to.equal(true);
      const upstreamBefore = env().sim.log.entries.length;
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      const mid = await openai.batches.retrieve(b.id);
      expect(mid.status).to.equal('in_progress');
      expect(mid.request_counts!.completed).to.be.below(40);
      expect(upstreamBefore).to.be.above(mid.request_counts!.completed); // some were in flight

      worker = await startBatchWorker({ claimStaleMs: 1500, pollMs: QUICK_POLL_MS });
      const done = await batchEnds(openai, b.id);
      expect(done.status).to.equal('completed');
      expect(done.request_counts).to.deep.equal({ total: 40, completed: 40, failed: 0 });
      const output = await outputOf(openai, done);
      expect(output.map((l) => l.custom_id).sort()).to.deep.equal(lines(40, 'k').map((l) => l.custom_id).sort());
      await billedOncePerLine(b.id, 40, output.map((l) => l.id));
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await worker?.close();
    }
  });

  it('a chat worker killed with kill -9 mid-batch: its lost lines run again under a new request id, billed once', async () => {
    const w = await childChatWorker();
    const worker = await startBatchWorker({ pollMs: QUICK_POLL_MS });
    try {
      env().sim.knobs.set('sim-chat-1', { delayMs: 400 });
      const b = await openai.batches.create({ input_file_id: await uploadBatchFile(openai, jsonl(lines(20, 'w'))), endpoint: '/v1/chat/completions', completion_window: '24h' });
      expect(await waitFor(() => env().sim.log.entries.length >= 3, 20_000)).to.equal(true);
      w.child.kill('SIGKILL');
      await w.restore(); // in-process pools: a live worker fails the stalled jobs (worker_lost)
      const done = await batchEnds(openai, b.id);
      expect(done.request_counts).to.deep.equal({ total: 20, completed: 20, failed: 0 });
      const output = await outputOf(openai, done);
      expect(new Set(output.map((l) => l.custom_id)).size).to.equal(20);
      const billed = await billedOncePerLine(b.id, 20, output.map((l) => l.id));
      expect(billed.some((id) => /_\d+_1$/.test(id)), 'a lost line ran again as attempt 1').to.equal(true);
    } finally {
      await w.restore();
      await worker.close();
    }
  });

  it('a web pod restarted mid-batch: the next pod answers the same progress from Postgres, the batch completes', async () => {
    env().sim.knobs.set('sim-chat-1', { delayMs: 100 });
    let pod = await startGateway();
    const viaPod = () => new OpenAI({ apiKey: o.key, baseURL: `${pod.url}/v1`, maxRetries: 0 });
    const worker = await startBatchWorker({ pollMs: QUICK_POLL_MS });
    try {
      const b = await viaPod().batches.create({ input_file_id: await uploadBatchFile(viaPod(), jsonl(lines(30, 'p'))), endpoint: '/v1/chat/completions', completion_window: '24h' });
      await waitFor(async () => ((await viaPod().batches.retrieve(b.id)).request_counts?.completed ?? 0) >= 3, 20_000, 20);
      await pod.close();
      pod = await startGateway();
      const seen = await viaPod().batches.retrieve(b.id);
      expect(seen.id).to.equal(b.id);
      expect(seen.request_counts!.completed).to.be.at.least(3);
      const done = await batchEnds(viaPod(), b.id);
      expect(done.request_counts).to.deep.equal({ total: 30, completed: 30, failed: 0 });
      await billedOncePerLine(b.id, 30, (await outputOf(viaPod(), done)).map((l) => l.id));
    } finally {
      await worker.close();
      await pod.close();
    }
  });

  it('expiry (BATCH_WINDOW_MS shortened): what finished is delivered, the rest is in the error file as batch_expired, unbilled', async () => {
    process.env.BATCH_WINDOW_MS = '3000';
    resetConfig();
    const worker = await startBatchWorker({ linesInFlight: 2, pollMs: QUICK_POLL_MS });
    try {
      expect(config().batches.windowMs).to.equal(3000);
      env().sim.knobs.set('sim-chat-1', { delayMs: 300 });
      const b = await openai.batches.create({ input_file_id: await uploadBatchFile(openai, jsonl(lines(40, 'x'))), endpoint: '/v1/chat/completions', completion_window: '24h' });
      expect(b.expires_at! - b.created_at).to.be.within(2, 3); // whole seconds around 3 s; 40 lines need at least 6 s
      const done = await batchEnds(openai, b.id);
      expect(done.status).to.equal('expired');
      expect(done.expired_at).to.be.a('number');
      const ok = done.request_counts!.completed;
      expect(ok).to.be.within(1, 39);
      expect(done.request_counts!.failed).to.equal(40 - ok);
      const errs = parseJsonl<{ custom_id: string; response: null; error: { code: string } }>(await (await openai.files.content(done.error_file_id!)).text());
      expect(errs).to.have.length(40 - ok);
      expect(errs.every((e) => e.response === null && e.error.code === 'batch_expired')).to.equal(true);
      await usageSettled();
      expect(await batchUsage(b.id)).to.have.length(ok);
    } finally {
      delete process.env.BATCH_WINDOW_MS;
      resetConfig();
      await worker.close();
    }
  });
});
