import { expect } from 'chai';
import { QueryTypes } from 'sequelize';
import { db } from '../../../shared/db/sequelize';
import { outboxDuring, usageSettled } from '../../helpers/usage';
import { StoredResponse } from '../../../shared/db/models';
import { batchEnds, batchUsage, chatLines, jsonl, outputOf, parseJsonl, uploadBatchFile, batchSuite } from './helpers';

/**
 * A batch line's usage travels with its answer to the runner, which writes it (and the line's request
 * log row) in the Postgres transaction that records the line: billing never depends on the Redis usage
 * outbox, so a Redis that loses its data cannot leave a delivered line unbilled (redis-restart.test.ts
 * checks that end to end; this checks the mechanism, with the outbox's drainer stopped).
 */
describe('batch lines are billed in the transaction that records them, not through the Redis usage outbox', function () {
  this.timeout(120_000);
  const s = batchSuite();

  it('with the usage drainer stopped, a finished batch is already billed once per line, with its log rows; the outbox holds none of its usage', async () => {
    const n = 12;
    const { result, records } = await outboxDuring(async () => {
      const b = await s.openai.batches.create({ input_file_id: await uploadBatchFile(s.openai, jsonl(chatLines(n, 'bw'))), endpoint: '/v1/chat/completions', completion_window: '24h' });
      const done = await batchEnds(s.openai, b.id);
      // read while nothing drains the outbox: only what the runner itself wrote
      const usage = await batchUsage(b.id);
      const logs = await db().query<{ request_id: string; status: number; input_tokens: string }>(
        `SELECT request_id, status, input_tokens FROM request_logs WHERE batch_id = :id ORDER BY request_id`,
        { type: QueryTypes.SELECT, replacements: { id: b.id } },
      );
      return { done, usage, logs, output: await outputOf(s.openai, done) };
    });
    const { done, usage, logs, output } = result;
    expect(done.request_counts).to.deep.equal({ total: n, completed: n, failed: 0 });
    expect(records.filter((r) => r.requestId.startsWith('batch_req_')), 'no batch line usage in the Redis outbox').to.deep.equal([]);
    expect(usage.map((u) => u.request_id).sort(), 'billed: exactly the delivered answers').to.deep.equal(output.map((l) => l.id).sort());
    for (const u of usage) {
      expect(u.lane).to.equal('background');
      expect(u.units.batch).to.equal(1);
      expect(u.units.cost_micros).to.be.below(0); // the batch discount
    }
    expect(logs.map((l) => l.request_id).sort()).to.deep.equal(output.map((l) => l.id).sort());
    expect(logs.every((l) => l.status === 200 && Number(l.input_tokens) > 0)).to.equal(true);
  });

  it('a line asking for a background response is refused 400 (its work would run after the line was recorded, and never be billed)', async () => {
    const lines = [
      { custom_id: 'now', method: 'POST', url: '/v1/responses', body: { model: 'sim-chat', input: 'answer now' } },
      { custom_id: 'later', method: 'POST', url: '/v1/responses', body: { model: 'sim-chat', background: true, input: 'write a long story' } },
    ];
    const b = await s.openai.batches.create({ input_file_id: await uploadBatchFile(s.openai, jsonl(lines)), endpoint: '/v1/responses', completion_window: '24h' });
    const done = await batchEnds(s.openai, b.id);
    expect(done.request_counts).to.deep.equal({ total: 2, completed: 1, failed: 1 });
    const errors = parseJsonl<{ custom_id: string; response: { status_code: number; body: { error: { code: string; param: string } } } }>(await (await s.openai.files.content(done.error_file_id!)).text());
    expect(errors.map((e) => [e.custom_id, e.response.status_code, e.response.body.error.code, e.response.body.error.param])).to.deep.equal([['later', 400, 'invalid_request', 'background']]);
    await new Promise((r) => setTimeout(r, 500));
    await usageSettled();
    expect((await batchUsage(b.id)).length, 'the answered line billed').to.equal(1);
    expect(await StoredResponse.count({ where: { orgId: s.o.org.id } }), 'no background response was started').to.equal(1);
  });
});
