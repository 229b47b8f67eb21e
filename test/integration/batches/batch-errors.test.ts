import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { db } from '../../../shared/db/sequelize';
import { MAX_LISTED_ERRORS, tooManyErrors } from '../../../shared/batches/input';
import { up } from '../../../shared/db/migrations/0037-batch-model';
import { batchEnds, batchSuite, jsonl, uploadBatchFile } from './helpers';

/** `n` lines that are not JSON. */
const notJson = (n: number) => Array.from({ length: n }, (_, i) => `{not json ${i}`).join('\n');

describe("a failed batch's errors: bounded to the first MAX_LISTED_ERRORS bad lines and their count", function () {
  this.timeout(60_000);
  const s = batchSuite();

  it('more bad lines than the bound: the first ones in file order, then one too_many_errors entry with the count; retrieve and list agree', async () => {
    const n = MAX_LISTED_ERRORS + 50;
    const b = await s.openai.batches.create({ input_file_id: await uploadBatchFile(s.openai, notJson(n)), endpoint: '/v1/chat/completions', completion_window: '24h' });
    const done = await batchEnds(s.openai, b.id);
    expect(done.status).to.equal('failed');
    const data = done.errors!.data!;
    expect(data).to.have.length(MAX_LISTED_ERRORS + 1);
    expect(data.slice(0, -1).map((e) => [e.line, e.code])).to.deep.equal(Array.from({ length: MAX_LISTED_ERRORS }, (_, i) => [i + 1, 'invalid_json_line']));
    expect(data.at(-1)).to.deep.equal({ code: 'too_many_errors', message: `${n} lines of the input file are invalid; the first ${MAX_LISTED_ERRORS} are listed.`, line: null, param: null });
    expect(done.model).to.equal(null);
    expect(done.request_counts).to.deep.equal({ total: 0, completed: 0, failed: 0 });
    const listed = (await s.openai.batches.list({ limit: 100 })).data.find((x) => x.id === b.id)!;
    expect(listed.errors).to.deep.equal(done.errors);
    expect(env().sim.log.entries).to.have.length(0);
  });

  it('exactly the bound: every bad line listed, no count entry; a long duplicated custom_id is cut in the message', async () => {
    const long = 'x'.repeat(512);
    const line = { custom_id: long, method: 'POST', url: '/v1/chat/completions', body: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] } };
    const text = [jsonl([line, line]).trim(), notJson(MAX_LISTED_ERRORS - 1)].join('\n');
    const b = await s.openai.batches.create({ input_file_id: await uploadBatchFile(s.openai, text), endpoint: '/v1/chat/completions', completion_window: '24h' });
    const data = (await batchEnds(s.openai, b.id)).errors!.data!;
    expect(data).to.have.length(MAX_LISTED_ERRORS);
    expect(data.map((e) => e.code)).to.not.include('too_many_errors');
    expect(data[0]).to.deep.equal({ code: 'duplicate_custom_id', message: `Line 2: the custom_id '${'x'.repeat(64)}…' is used by an earlier line.`, line: 2, param: 'custom_id' });
  });

  it('migration 0037 cuts a row written before the bound to the same shape, and leaves bounded rows alone on a second run', async () => {
    const b = await s.openai.batches.create({ input_file_id: await uploadBatchFile(s.openai, notJson(1)), endpoint: '/v1/chat/completions', completion_window: '24h' });
    await batchEnds(s.openai, b.id);
    const n = MAX_LISTED_ERRORS + 400;
    const legacy = Array.from({ length: n }, (_, i) => ({ code: 'invalid_json_line', message: `Line ${i + 1} is not valid JSON.`, line: i + 1, param: null }));
    await db().query('UPDATE batches SET errors = :errors WHERE id = :id', { replacements: { id: b.id, errors: JSON.stringify({ object: 'list', data: legacy }) } });
    await up(db().getQueryInterface());
    const once = (await s.openai.batches.retrieve(b.id)).errors;
    expect(once).to.deep.equal({ object: 'list', data: [...legacy.slice(0, MAX_LISTED_ERRORS), tooManyErrors(n)] });
    await up(db().getQueryInterface());
    expect((await s.openai.batches.retrieve(b.id)).errors).to.deep.equal(once);
  });
});
