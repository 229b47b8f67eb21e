import { expect } from 'chai';
import { call, keyHeader } from '../../helpers/http';
import { expectOpenAI } from '../../helpers/conformance';
import { batchEnds, jsonl, uploadBatchFile, batchSuite } from './helpers';

/**
 * OpenAI's API answers `null` for a batch's or file's fields that are not set yet (`output_file_id`,
 * `failed_at`, `metadata`, ... as in its own Batch examples); its document types them as optional
 * non-null fields. The API wins: nulls are dropped before the document's schema is applied.
 */
function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== null).map(([k, x]) => [k, withoutNulls(x)]));
  return v;
}

describe("files and batches against OpenAI's OpenAPI document (vendored)", function () {
  this.timeout(60_000);
  const s = batchSuite();

  it('OpenAIFile, ListFilesResponse, DeleteFileResponse, Batch in each status it passes, ListBatchesResponse', async () => {
    const get = async (path: string) => {
      const r = await call('GET', path, { headers: keyHeader(s.o.key) });
      expect(r.status, r.text).to.equal(200);
      return r.body;
    };
    const fileId = await uploadBatchFile(s.openai, jsonl([{ custom_id: 'a', method: 'POST', url: '/v1/embeddings', body: { model: 'sim-embed', input: 'x' } }]));
    expectOpenAI('OpenAIFile', withoutNulls(await get(`/v1/files/${fileId}`)));
    expectOpenAI('ListFilesResponse', withoutNulls(await get('/v1/files')));
    const created = await call('POST', '/v1/batches', { headers: keyHeader(s.o.key), json: { input_file_id: fileId, endpoint: '/v1/embeddings', completion_window: '24h', metadata: { k: 'v' } } });
    expectOpenAI('Batch', withoutNulls(created.body));
    const done = await batchEnds(s.openai, created.body.id);
    const completed = await get(`/v1/batches/${done.id}`);
    expect(completed.status).to.equal('completed');
    expectOpenAI('Batch', withoutNulls(completed));
    expectOpenAI('OpenAIFile', withoutNulls(await get(`/v1/files/${completed.output_file_id}`)));
    const failed = await s.openai.batches.create({ input_file_id: await uploadBatchFile(s.openai, '{broken\n'), endpoint: '/v1/embeddings', completion_window: '24h' });
    const failedBody = await get(`/v1/batches/${(await batchEnds(s.openai, failed.id)).id}`);
    expect(failedBody.status).to.equal('failed');
    expectOpenAI('Batch', withoutNulls(failedBody));
    expectOpenAI('ListBatchesResponse', withoutNulls(await get('/v1/batches?limit=5')));
    const del = await call('DELETE', `/v1/files/${fileId}`, { headers: keyHeader(s.o.key) });
    expectOpenAI('DeleteFileResponse', del.body);
  });
});
