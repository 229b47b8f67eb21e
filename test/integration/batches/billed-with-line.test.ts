import { expect } from 'chai';
import { QueryTypes } from 'sequelize';
import { db } from '../../../shared/db/sequelize';
import { outboxDuring } from '../../helpers/usage';
import { batchEnds, batchUsage, chatLines, jsonl, outputOf, uploadBatchFile, batchSuite } from './helpers';

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
});
