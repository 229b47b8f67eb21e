import { expect } from 'chai';
import OpenAI from 'openai';
import { QueryTypes } from 'sequelize';
import { db } from '../../../shared/db/sequelize';
import { laneRejections } from '../../../shared/metrics';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { startBatchWorker } from '../../../workers/batch/main';
import { pauseMs, upstreamPauseMs } from '../../../shared/batches/pacing';
import { batchEnds, billedOncePerLine, jsonl, outputOf, uploadBatchFile, type BatchWorker } from './helpers';

const embedLines = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => ({ custom_id: `${tag}${i}`, method: 'POST', url: '/v1/embeddings', body: { model: 'sim-embed', input: `${tag} ${i}` } }));

/** Refusals of the embeddings background lane so far (this process runs the gateway and the runner). */
async function embeddingsLaneRefusals(): Promise<number> {
  const m = await laneRejections.get();
  return m.values.filter((v) => v.labels.pool === 'embeddings' && v.labels.lane === 'background').reduce((a, v) => a + v.value, 0);
}

/** The Activity rows of these batches' lines, by status and error code. */
async function rowsOf(batchIds: string[]): Promise<{ request_id: string; status: number; error_code: string | null }[]> {
  await usageSettled();
  return db().query(`SELECT request_id, status, error_code FROM request_logs WHERE batch_id IN (:batchIds)`, { type: QueryTypes.SELECT, replacements: { batchIds } });
}

/** A batch is paced, never fed again in a loop nor failed, by a full lane and by its upstream's 429 (docs/batches.md). */
describe('batches: pacing by the lane and the upstream', function () {
  this.timeout(90_000);
  let worker: BatchWorker | undefined;
  afterEach(async () => {
    env().sim.knobs.reset();
    await worker?.close();
    worker = undefined;
  });
  beforeEach(resetSim);

  it("a line refused because the org's lane is full waits (same request id) instead of being fed again at once: no loop, no line failed, no Activity row but each line's answer", async () => {
    const o = await buildOrg(env().redis, { laneOverrides: { 'chat:background': 1 } });
    const openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    // two batches of one org share its one lane: one line runs (held upstream), every other is refused
    env().sim.knobs.set('*', { hold: true });
    const a = await openai.batches.create({ input_file_id: await uploadBatchFile(openai, jsonl(embedLines(3, 'a'))), endpoint: '/v1/embeddings', completion_window: '24h' });
    const b = await openai.batches.create({ input_file_id: await uploadBatchFile(openai, jsonl(embedLines(3, 'b'))), endpoint: '/v1/embeddings', completion_window: '24h' });
    const before = await embeddingsLaneRefusals();
    worker = await startBatchWorker();
    expect(await waitFor(() => env().sim.log.entries.length >= 1, 15_000, 20)).to.equal(true);
    await new Promise((r) => setTimeout(r, 2500));
    const refused = (await embeddingsLaneRefusals()) - before;
    // paced: a refusal pauses its batch at least a second (without: hundreds in these 2.5 s)
    expect(refused, 'lane refusals while one line holds the lane').to.be.at.most(6);
    expect(env().sim.log.entries.length).to.equal(1);
    for (const id of [a.id, b.id]) expect((await openai.batches.retrieve(id)).request_counts).to.deep.equal({ total: 3, completed: 0, failed: 0 });
    expect(await rowsOf([a.id, b.id]), 'no Activity row for a line held back').to.deep.equal([]);
    env().sim.knobs.reset(); // the upstream answers: the lane frees, the held lines run
    const delivered: string[] = [];
    for (const id of [a.id, b.id]) {
      const done = await batchEnds(openai, id, undefined, 60_000);
      expect(done.status).to.equal('completed');
      expect(done.request_counts).to.deep.equal({ total: 3, completed: 3, failed: 0 });
      const out = await outputOf(openai, done);
      await billedOncePerLine(id, 3, out.map((l) => l.id));
      delivered.push(...out.map((l) => l.id));
    }
    const rows = await rowsOf([a.id, b.id]);
    expect(rows.map((r) => [r.request_id, r.status]).sort()).to.deep.equal(delivered.map((id) => [id, 200]).sort());
  });

  it("a line the upstream provider rate-limits (429 upstream_rate_limited after the gateway's retries) is paced and run again, more often than the 3 attempts a lost worker gets, not errored; answered and billed once when the upstream allows it", async () => {
    const o = await buildOrg(env().redis);
    const openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    env().sim.knobs.set('*', { status: 429, retryAfter: 1 });
    const ob = await openai.batches.create({ input_file_id: await uploadBatchFile(openai, jsonl(embedLines(2, 'u'))), endpoint: '/v1/embeddings', completion_window: '24h' });
    worker = await startBatchWorker();
    const waits = () => db().query<{ w: number }>(`SELECT min(upstream_waits)::int AS w FROM batch_lines WHERE batch_id = :id`, { type: QueryTypes.SELECT, replacements: { id: ob.id } });
    expect(await waitFor(async () => (await waits())[0].w >= 3, 60_000, 200), 'each line waited out the upstream 3 times').to.equal(true);
    const held = await openai.batches.retrieve(ob.id);
    expect(held.status).to.equal('in_progress');
    expect(held.request_counts).to.deep.equal({ total: 2, completed: 0, failed: 0 });
    env().sim.knobs.reset();
    const done = await batchEnds(openai, ob.id, undefined, 60_000);
    expect(done.request_counts).to.deep.equal({ total: 2, completed: 2, failed: 0 });
    expect(done.error_file_id ?? null).to.equal(null);
    const out = await outputOf(openai, done);
    // the delivered answer is a later attempt's (its own request id), billed once per line
    for (const l of out) expect(l.id).to.match(/_\d+_\d+$/);
    await billedOncePerLine(ob.id, 2, out.map((l) => l.id));
  });

  it("the pauses: a refusal's Retry-After, 1 to 10 s; after the upstream's 429, at least its Retry-After, doubling with the line's waits from 1 s to at most 1 min", () => {
    expect([pauseMs(undefined), pauseMs('0'), pauseMs('3'), pauseMs(60)]).to.deep.equal([1000, 1000, 3000, 10_000]);
    expect([0, 1, 2, 5, 6, 40].map((w) => upstreamPauseMs(undefined, w))).to.deep.equal([1000, 2000, 4000, 32_000, 60_000, 60_000]);
    expect([upstreamPauseMs('20', 0), upstreamPauseMs('20', 5), upstreamPauseMs('600', 0)]).to.deep.equal([20_000, 32_000, 60_000]);
  });
});
