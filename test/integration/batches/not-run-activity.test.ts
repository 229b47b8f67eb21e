import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { QueryTypes } from 'sequelize';
import { db } from '../../../shared/db/sequelize';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { config, resetConfig } from '../../../shared/config/env';
import { startBatchWorker } from '../../../workers/batch/main';
import { batchEnds, batchUsage, chatLines, jsonl, parseJsonl, uploadBatchFile, type BatchWorker } from './helpers';

type Row = { request_id: string; status: number; error_code: string | null; route: string; dialect: string; model: string; org_id: string; api_key_id: string; input_tokens: number; cost_micros: string; lane: string | null };

async function activity(batchId: string): Promise<Row[]> {
  await usageSettled();
  return db().query<Row>('SELECT * FROM request_logs WHERE batch_id = :batchId ORDER BY request_id', { type: QueryTypes.SELECT, replacements: { batchId } });
}

/**
 * A line that never ran (its batch cancelled or expired first) is in the results (OpenAI's error
 * file `batch_cancelled`/`batch_expired`, Anthropic's `canceled`/`expired`) and, with this, in the
 * Activity log too: one row, 499 `batch_cancelled` or 408 `batch_expired`, no tokens, nothing billed,
 * written by the close. Before, a line that ran had its row and a line held back and then closed had
 * none, so the log of a batch missed its closed lines (docs/observability.md).
 */
describe('batches: lines closed without running have their Activity row', function () {
  this.timeout(120_000);
  let worker: BatchWorker | undefined;
  beforeEach(resetSim);
  afterEach(async () => {
    env().sim.knobs.reset();
    await worker?.close();
    worker = undefined;
  });

  it('a Message Batch cancelled before any line ran: each line one row, 499 batch_cancelled, unbilled, under the line\'s request id', async () => {
    const o = await buildOrg(env().redis);
    const anthropic = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
    const mb = await anthropic.messages.batches.create({
      requests: [0, 1, 2].map((i) => ({ custom_id: `c${i}`, params: { model: 'sim-chat', max_tokens: 10, messages: [{ role: 'user' as const, content: `hi ${i}` }] } })),
    });
    await anthropic.messages.batches.cancel(mb.id); // no runner yet: nothing ran
    worker = await startBatchWorker();
    expect(await waitFor(async () => (await anthropic.messages.batches.retrieve(mb.id)).processing_status === 'ended', 30_000, 100)).to.equal(true);
    const results: Array<{ custom_id: string; result: { type: string } }> = [];
    for await (const r of await anthropic.messages.batches.results(mb.id)) results.push(r as never);
    expect(results.map((r) => [r.custom_id, r.result.type])).to.deep.equal([['c0', 'canceled'], ['c1', 'canceled'], ['c2', 'canceled']]);
    const hex = mb.id.replace(/^[a-z]+_/, '');
    const rows = await activity(mb.id);
    expect(rows.map((r) => [r.request_id, r.status, r.error_code])).to.deep.equal([0, 1, 2].map((i) => [`batch_req_${hex}_${i}`, 499, 'batch_cancelled']));
    for (const r of rows) {
      expect(r).to.deep.include({ route: '/v1/messages', dialect: 'anthropic', model: 'sim-chat', org_id: o.org.id, api_key_id: o.keyId, input_tokens: 0, lane: null });
      expect(Number(r.cost_micros)).to.equal(0);
    }
    expect(await batchUsage(mb.id), 'nothing billed').to.deep.equal([]);
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
  });

  it('an OpenAI batch expiring mid-way: every line one row, the answered ones 200 and the rest 408 batch_expired under the ids of the error file', async () => {
    process.env.BATCH_WINDOW_MS = '3000';
    resetConfig();
    try {
      expect(config().batches.windowMs).to.equal(3000);
      const o = await buildOrg(env().redis);
      const openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
      env().sim.knobs.set('sim-chat-1', { delayMs: 400 });
      worker = await startBatchWorker({ linesInFlight: 1 });
      const b = await openai.batches.create({ input_file_id: await uploadBatchFile(openai, jsonl(chatLines(20, 'e'))), endpoint: '/v1/chat/completions', completion_window: '24h' });
      const done = await batchEnds(openai, b.id);
      expect(done.status).to.equal('expired');
      const ok = done.request_counts!.completed;
      expect(ok).to.be.within(1, 19);
      const errs = parseJsonl<{ id: string; error: { code: string } }>(await (await openai.files.content(done.error_file_id!)).text());
      expect(errs).to.have.length(20 - ok);
      const rows = await activity(b.id);
      expect(rows, 'one row per line').to.have.length(20);
      expect(rows.filter((r) => r.status === 200)).to.have.length(ok);
      const closed = rows.filter((r) => r.status !== 200);
      expect(closed.map((r) => `${r.request_id} ${r.status} ${r.error_code}`).sort(), 'the error file\'s lines, 408 batch_expired').to.deep.equal(errs.map((e) => `${e.id} 408 batch_expired`).sort());
      for (const r of closed) expect(r).to.deep.include({ route: '/v1/chat/completions', dialect: 'openai-chat', model: 'sim-chat', input_tokens: 0 });
      expect(await batchUsage(b.id), 'only the answered lines billed').to.have.length(ok);
    } finally {
      delete process.env.BATCH_WINDOW_MS;
      resetConfig();
    }
  });
});
