import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import { QueryTypes } from 'sequelize';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { expectErrorEnvelope } from '../../helpers/errors';
import { db } from '../../../shared/db/sequelize';
import { batchEnds, chatLines, expectSwept, jsonl, uploadBatchFile, batchSuite } from './helpers';

const badLine = { custom_id: 'no-model', method: 'POST', url: '/v1/chat/completions', body: { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] } };

async function stored(orgId: string): Promise<{ files: number; batches: number }> {
  const [r] = await db().query<{ files: string; batches: string }>(
    'SELECT (SELECT count(*) FROM batch_files WHERE org_id = :orgId) AS files, (SELECT count(*) FROM batches WHERE org_id = :orgId) AS batches',
    { type: QueryTypes.SELECT, replacements: { orgId } },
  );
  return { files: Number(r.files), batches: Number(r.batches) };
}

describe('OpenAI Batch output_expires_after and file expires_after with the official client', function () {
  this.timeout(60_000);
  const s = batchSuite();

  it("a batch's output and error files expire output_expires_after.seconds after their creation; the Batch object is the SDK's (no echo)", async () => {
    const input = await uploadBatchFile(s.openai, jsonl([...chatLines(2, 'ok'), badLine]));
    const b = await s.openai.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h', output_expires_after: { anchor: 'created_at', seconds: 7200 } });
    expect(b).to.not.have.property('output_expires_after');
    const done = await batchEnds(s.openai, b.id);
    expect(done.request_counts).to.deep.equal({ total: 3, completed: 2, failed: 1 });
    for (const id of [done.output_file_id!, done.error_file_id!]) {
      const f = await s.openai.files.retrieve(id);
      expect(f.purpose).to.equal('batch_output');
      expect(f.expires_at! - f.created_at, id).to.equal(7200);
    }
    // the input file keeps the default retention (BATCH_FILE_RETENTION_DAYS, 30)
    const inFile = await s.openai.files.retrieve(input);
    expect(inFile.expires_at! - inFile.created_at).to.equal(30 * 86_400);
  });

  it('an upload with expires_after (multipart expires_after[anchor], expires_after[seconds]) expires that long after its creation', async () => {
    const f = await s.openai.files.create({ file: await toFile(Buffer.from(jsonl(chatLines(1, 'u'))), 'in.jsonl'), purpose: 'batch', expires_after: { anchor: 'created_at', seconds: 3600 } });
    expect(f.expires_at! - f.created_at).to.equal(3600);
    expect((await s.openai.files.retrieve(f.id)).expires_at).to.equal(f.expires_at);
  });

  it('an hour later (the rows moved back 3,601 s) the clock sweeps the output file of a 3,600 s policy, row and bytes, and keeps the 30-day input file', async () => {
    const input = await uploadBatchFile(s.openai, jsonl(chatLines(2, 'swept')));
    const b = await s.openai.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h', output_expires_after: { anchor: 'created_at', seconds: 3600 } });
    const out = (await batchEnds(s.openai, b.id)).output_file_id!;
    await db().query("UPDATE batch_files SET created_at = created_at - interval '3601 seconds', expires_at = expires_at - interval '3601 seconds' WHERE id IN (:ids)", { replacements: { ids: [input, out] } });
    await expectSwept(s.openai, out, input);
    expect((await s.openai.files.retrieve(input)).id).to.equal(input);
  });

  it('bad policies: 400 invalid_request in the spec envelope naming the field, nothing stored', async () => {
    const o = await buildOrg(env().redis);
    const openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const input = await uploadBatchFile(openai, jsonl(chatLines(1, 'r')));
    const policies: [unknown, string][] = [
      [{ anchor: 'last_active_at', seconds: 3600 }, 'output_expires_after.anchor'],
      [{ anchor: 'created_at', seconds: 3599 }, 'output_expires_after.seconds'],
      [{ anchor: 'created_at', seconds: 2_592_001 }, 'output_expires_after.seconds'],
      [{ anchor: 'created_at', seconds: 3600.5 }, 'output_expires_after.seconds'],
      [{ anchor: 'created_at', seconds: '3600' }, 'output_expires_after.seconds'],
      [{ anchor: 'created_at' }, 'output_expires_after.seconds'],
      ['created_at', 'output_expires_after'],
    ];
    for (const [policy, param] of policies) {
      const r = await call('POST', '/v1/batches', { headers: keyHeader(o.key), json: { input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h', output_expires_after: policy } });
      expect(r.status, JSON.stringify(policy)).to.equal(400);
      expectErrorEnvelope(r.text, 'invalid_request');
      expect(r.body.error.param, JSON.stringify(policy)).to.equal(param);
    }
    try {
      await openai.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h', output_expires_after: { anchor: 'created_at', seconds: 60 } });
      expect.fail('should be refused');
    } catch (err) {
      const e = err as InstanceType<typeof OpenAI.APIError>;
      expect(e.status).to.equal(400);
      expect(e.code).to.equal('invalid_request');
    }
    for (const [anchor, seconds] of [['completed_at', '3600'], ['created_at', 'abc'], ['created_at', '100'], ['created_at', '3600.5']]) {
      const form = new FormData();
      form.set('purpose', 'batch');
      form.set('expires_after[anchor]', anchor);
      form.set('expires_after[seconds]', seconds);
      form.set('file', new Blob([jsonl(chatLines(1, 'f'))]), 'x.jsonl');
      const r = await fetch(`${env().gw.url}/v1/files`, { method: 'POST', headers: keyHeader(o.key), body: form });
      expect(r.status, `${anchor} ${seconds}`).to.equal(400);
      expectErrorEnvelope(await r.text(), 'invalid_request');
    }
    try {
      await openai.files.create({ file: await toFile(Buffer.from(jsonl(chatLines(1, 'g'))), 'g.jsonl'), purpose: 'batch', expires_after: { anchor: 'created_at', seconds: 2_592_001 } });
      expect.fail('should be refused');
    } catch (err) {
      const e = err as InstanceType<typeof OpenAI.APIError>;
      expect(e.status).to.equal(400);
      expect(e.code).to.equal('invalid_request');
    }
    expect(await stored(o.org.id)).to.deep.equal({ files: 1, batches: 0 }); // the input file alone
  });
});
