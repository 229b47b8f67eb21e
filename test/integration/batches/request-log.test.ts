import { expect } from 'chai';
import { QueryTypes } from 'sequelize';
import { usageSettled } from '../../helpers/usage';
import { db } from '../../../shared/db/sequelize';
import { batchEnds, jsonl, uploadBatchFile, batchSuite } from './helpers';

type Row = Record<string, unknown>;

const logRows = async (where: string, replacements: Record<string, unknown>): Promise<Row[]> => {
  await usageSettled();
  return db().query<Row>(`SELECT * FROM request_logs WHERE ${where} ORDER BY request_id`, { type: QueryTypes.SELECT, replacements });
};

describe('request log of batch lines: each line\'s row names its batch', function () {
  this.timeout(120_000);
  const s = batchSuite();

  it('a chat batch (official OpenAI client): one row per line with batch_id (a refused line too), the background lane, its tokens; a synchronous request has none', async () => {
    const lines = Array.from({ length: 3 }, (_, i) => ({
      custom_id: `log-${i}`, method: 'POST', url: '/v1/chat/completions',
      body: { model: 'sim-chat', messages: [{ role: 'user', content: `line ${i}` }], max_tokens: 10 },
    }));
    lines.push({ custom_id: 'log-bad', method: 'POST', url: '/v1/chat/completions', body: { model: 'sim-chat', max_tokens: 10 } as (typeof lines)[0]['body'] });
    const b = await s.openai.batches.create({ input_file_id: await uploadBatchFile(s.openai, jsonl(lines)), endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect((await batchEnds(s.openai, b.id)).request_counts).to.deep.equal({ total: 4, completed: 3, failed: 1 });
    const all = await logRows('batch_id = :id', { id: b.id });
    expect(all).to.have.length(4);
    const refused = all.filter((r) => r.status !== 200);
    expect(refused, 'the line without messages: its 400, from the runner\'s loopback app').to.have.length(1);
    expect(refused[0]).to.deep.include({ status: 400, route: '/v1/chat/completions', org_id: s.o.org.id, input_tokens: 0 });
    expect(refused[0].error_code).to.be.a('string').and.not.equal('');
    const rows = all.filter((r) => r.status === 200);
    expect(rows).to.have.length(3);
    for (const r of rows) {
      expect(r).to.deep.include({ batch_id: b.id, org_id: s.o.org.id, api_key_id: s.o.keyId, route: '/v1/chat/completions', dialect: 'openai-chat', lane: 'background', status: 200, error_code: null });
      expect(String(r.request_id)).to.match(/^batch_req_/);
      expect(Number(r.input_tokens)).to.be.above(0);
    }

    const { response } = await s.openai.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'sync' }] }).withResponse();
    const sync = await logRows('request_id = :id', { id: response.headers.get('x-service-request-id') });
    expect(sync).to.have.length(1);
    expect(sync[0]).to.deep.include({ batch_id: null, lane: 'interactive' });
  });

  it('a message batch (official Anthropic client): its lines\' rows carry the msgbatch id', async () => {
    const mb = await s.anthropic.messages.batches.create({
      requests: [0, 1].map((i) => ({ custom_id: `m${i}`, params: { model: 'sim-claude', max_tokens: 10, messages: [{ role: 'user' as const, content: `hi ${i}` }] } })),
    });
    let ended = mb;
    for (let i = 0; i < 300 && ended.processing_status !== 'ended'; i++) {
      await new Promise((r) => setTimeout(r, 200));
      ended = await s.anthropic.messages.batches.retrieve(mb.id);
    }
    expect(ended.request_counts.succeeded).to.equal(2);
    const rows = await logRows('batch_id = :id', { id: mb.id });
    expect(rows).to.have.length(2);
    for (const r of rows) expect(r).to.deep.include({ batch_id: mb.id, route: '/v1/messages', dialect: 'anthropic', lane: 'background', status: 200 });
  });
});
