import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { QueryTypes } from 'sequelize';
import { db } from '../../../shared/db/sequelize';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { usageSettled } from '../../helpers/usage';
import { roomInMinute, waitFor } from '../../helpers/wait';
import { updateKeyControls } from '../../../shared/tenancy/ops';
import { startSearchUpstream, useSearchProvider, type SearchUpstream } from '../../helpers/search-upstream';
import { startBatchWorker } from '../../../workers/batch/main';
import { keys } from '../../../shared/redis/keys';
import { batchEnds, jsonl, outputOf, uploadBatchFile, type BatchWorker } from './helpers';

type Row = { request_id: string; status: number; error_code: string | null };

/** A batch's Activity rows. */
async function activity(batchId: string): Promise<Row[]> {
  await usageSettled();
  return db().query<Row>('SELECT request_id, status, error_code FROM request_logs WHERE batch_id = :batchId ORDER BY request_id', { type: QueryTypes.SELECT, replacements: { batchId } });
}

const waitsOf = async (batchId: string) =>
  (await db().query<{ w: number }>('SELECT max(upstream_waits)::int AS w FROM batch_lines WHERE batch_id = :batchId', { type: QueryTypes.SELECT, replacements: { batchId } }))[0].w;

/**
 * A try of a batch line that is held back and runs again (its key's rpm, the upstream's 429) is no
 * outcome: no Activity row, no charge; the line's one row and its charges are its answer's
 * (docs/batches.md, docs/observability.md). And a pause is every runner's (Redis), not one process's.
 */
describe('batches: held tries leave one row and one charge per line; pauses are shared', function () {
  this.timeout(120_000);
  const workers: BatchWorker[] = [];
  afterEach(async () => {
    env().sim.knobs.reset();
    await Promise.all(workers.splice(0).map((w) => w.close()));
  });
  beforeEach(resetSim);

  it("the key's rpm holds lines back: each line has exactly one Activity row, its answer's (no 429 row per paced try)", async () => {
    const o = await buildOrg(env().redis);
    await updateKeyControls(env().redis, o.keyId, { rpm: 1 });
    const openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const lines = Array.from({ length: 3 }, (_, i) => ({ custom_id: `r${i}`, method: 'POST', url: '/v1/embeddings', body: { model: 'sim-embed', input: `x ${i}` } }));
    const ob = await openai.batches.create({ input_file_id: await uploadBatchFile(openai, jsonl(lines)), endpoint: '/v1/embeddings', completion_window: '24h' });
    expect(await roomInMinute(20_000), 'the held tries fall in one rate-limit minute').to.equal(true);
    workers.push(await startBatchWorker());
    expect(await waitFor(async () => (await openai.batches.retrieve(ob.id)).request_counts!.completed === 1, 30_000, 100)).to.equal(true);
    await new Promise((r) => setTimeout(r, 2500)); // the other two lines are refused (429) and paced, at least once each
    expect((await openai.batches.retrieve(ob.id)).request_counts).to.deep.equal({ total: 3, completed: 1, failed: 0 });
    await updateKeyControls(env().redis, o.keyId, { rpm: 100 });
    const done = await batchEnds(openai, ob.id, undefined, 40_000);
    expect(done.request_counts).to.deep.equal({ total: 3, completed: 3, failed: 0 });
    const delivered = (await outputOf(openai, done)).map((l) => l.id).sort();
    expect((await activity(ob.id)).map((r) => [r.request_id, r.status])).to.deep.equal(delivered.map((id) => [id, 200]));
  });

  it("a line whose paid web search ran before the upstream's 429 runs again: the search is charged once (one ledger row, one usage event, the delivered attempt's), one Activity row", async () => {
    let first = true;
    // the first search's answer is held while the model upstream starts refusing: the line's next turn meets a 429
    const up: SearchUpstream = await startSearchUpstream(() => {
      if (first) env().sim.knobs.set('*', { status: 429, retryAfter: 1 });
      first = false;
      return 0;
    });
    try {
      const o = await buildOrg(env().redis);
      await useSearchProvider(o.org.id, up, 'batch-held-search');
      const anthropic = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
      const mb = await anthropic.messages.batches.create({
        requests: [{ custom_id: 's1', params: { model: 'sim-chat', max_tokens: 300, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'Please search for honey bees' }] } }],
      });
      workers.push(await startBatchWorker());
      expect(await waitFor(async () => (await waitsOf(mb.id)) >= 1, 60_000, 100), 'the line waited out the upstream once').to.equal(true);
      env().sim.knobs.reset();
      expect(await waitFor(async () => (await anthropic.messages.batches.retrieve(mb.id)).processing_status === 'ended', 60_000, 200)).to.equal(true);
      const results: Array<{ custom_id: string; result: { type: string; message?: { usage: { server_tool_use?: { web_search_requests: number } } } } }> = [];
      for await (const r of await anthropic.messages.batches.results(mb.id)) results.push(r as never);
      expect(results.map((r) => r.result.type)).to.deep.equal(['succeeded']);
      expect(results[0].result.message!.usage.server_tool_use?.web_search_requests).to.equal(1);
      expect(up.queries, 'the search ran in both attempts').to.deep.equal(['honey bees', 'honey bees']);
      await usageSettled();
      const ledger = await db().query<{ request_id: string }>('SELECT request_id FROM search_usage WHERE org_id = :orgId', { type: QueryTypes.SELECT, replacements: { orgId: o.org.id } });
      const events = await db().query<{ request_id: string }>(`SELECT request_id FROM usage_events WHERE org_id = :orgId AND modality = 'web_search'`, { type: QueryTypes.SELECT, replacements: { orgId: o.org.id } });
      const [{ request_id: answered }] = await db().query<{ request_id: string }>('SELECT request_id FROM batch_lines WHERE batch_id = :id', { type: QueryTypes.SELECT, replacements: { id: mb.id } });
      expect(answered, 'delivered by a later attempt').to.match(/_0_\d+$/);
      expect(ledger.map((r) => r.request_id), 'one ledger row').to.deep.equal([`${answered}.search1`]);
      expect(events.map((r) => r.request_id), 'one usage event').to.deep.equal([`${answered}.search1`]);
      expect((await activity(mb.id)).map((r) => [r.request_id, r.status]), 'one Activity row: the answer').to.deep.equal([[answered, 200]]);
      const reservations = await db().query('SELECT 1 FROM search_reservations WHERE org_id = :orgId', { type: QueryTypes.SELECT, replacements: { orgId: o.org.id } });
      expect(reservations, 'the failed attempt gave its search back').to.deep.equal([]);
    } finally {
      await up.close();
    }
  });

  it("a pause after the upstream's 429 holds the batch in every runner: a second runner started during it sends nothing until it ends", async () => {
    const o = await buildOrg(env().redis);
    const openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    env().sim.knobs.set('*', { status: 429, retryAfter: 5 });
    const lines = [{ custom_id: 'p', method: 'POST', url: '/v1/embeddings', body: { model: 'sim-embed', input: 'x' } }];
    const ob = await openai.batches.create({ input_file_id: await uploadBatchFile(openai, jsonl(lines)), endpoint: '/v1/embeddings', completion_window: '24h' });
    workers.push(await startBatchWorker());
    expect(await waitFor(async () => (await waitsOf(ob.id)) >= 1, 60_000, 50)).to.equal(true);
    const sent = env().sim.log.entries.length;
    workers.push(await startBatchWorker()); // another batchworker process, with nothing paused in its memory
    await new Promise((r) => setTimeout(r, 2000));
    expect(env().sim.log.entries.length, 'no line sent during the pause').to.equal(sent);
    expect(await env().redis.pttl(keys.batchPause(ob.id)), 'the pause is in Redis').to.be.above(500);
    expect(await waitsOf(ob.id)).to.equal(1);
    env().sim.knobs.reset();
    const done = await batchEnds(openai, ob.id, undefined, 40_000);
    expect(done.request_counts).to.deep.equal({ total: 1, completed: 1, failed: 0 });
  });
});
