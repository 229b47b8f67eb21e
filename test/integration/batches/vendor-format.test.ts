import { expect } from 'chai';
import { QueryTypes } from 'sequelize';
import { db } from '../../../shared/db/sequelize';
import OpenAI, { toFile } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { roomInMinute, waitFor } from '../../helpers/wait';
import { rotateApiKey, updateKeyControls } from '../../../shared/tenancy/ops';
import { rateExceeded } from '../../../shared/limits/limits';
import { mayRetry } from '../../../shared/errors/codes';
import { heldBack } from '../../../shared/batches/pacing';
import { startBatchWorker } from '../../../workers/batch/main';
import { batchEnds, billedOncePerLine, jsonl, parseJsonl, uploadBatchFile, type BatchWorker } from './helpers';

/** Differences from the vendors' documented formats found by a review against the SDKs and API references (docs/batches.md). */
describe("batches: the vendors' documented formats where the other suites do not look", function () {
  this.timeout(60_000);
  let worker: BatchWorker | undefined;
  afterEach(async () => {
    await worker?.close();
    worker = undefined;
  });
  beforeEach(resetSim);

  it('GET /v1/messages/batches: limit ranges from 1 to 1000 (Anthropic\'s List Message Batches reference), the SDK\'s list({limit: 1000}) answers', async () => {
    const o = await buildOrg(env().redis);
    const client = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
    const b = await client.messages.batches.create({ requests: [{ custom_id: 'l', params: { model: 'sim-claude', max_tokens: 4, messages: [{ role: 'user', content: 'x' }] } }] });
    const page = await client.messages.batches.list({ limit: 1000 });
    expect(page.data.map((x) => x.id)).to.deep.equal([b.id]);
    expect(page.has_more).to.equal(false);
    const headers = { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' };
    const over = await call('GET', '/v1/messages/batches?limit=1001', { headers });
    expect(over.status).to.equal(400);
    expect(over.body.error).to.include({ type: 'invalid_request_error' });
    expect(over.body.error.message).to.include('1000');
    // OpenAI's batch list keeps 1..100 (its reference: "Limit can range between 1 and 100")
    expect((await call('GET', '/v1/batches?limit=101', { headers: keyHeader(o.key) })).status).to.equal(400);
  });

  it("a batch's output file named as an input file: 400 invalid_request naming input_file_id (the file exists; OpenAI: input files \"must be uploaded with the purpose `batch`\"), nothing stored", async () => {
    const o = await buildOrg(env().redis);
    const openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    worker = await startBatchWorker();
    const input = await uploadBatchFile(openai, jsonl([{ custom_id: 'e', method: 'POST', url: '/v1/embeddings', body: { model: 'sim-embed', input: 'x' } }]));
    const done = await batchEnds(openai, (await openai.batches.create({ input_file_id: input, endpoint: '/v1/embeddings', completion_window: '24h' })).id);
    const output = await openai.files.retrieve(done.output_file_id!);
    expect(output.purpose).to.equal('batch_output');
    const r = await call('POST', '/v1/batches', { headers: keyHeader(o.key), json: { input_file_id: output.id, endpoint: '/v1/embeddings', completion_window: '24h' } });
    expect(r.status, r.text).to.equal(400);
    expect(r.body.error).to.include({ code: 'invalid_request', type: 'invalid_request_error', param: 'input_file_id' });
    expect(r.body.error.message).to.include('batch_output');
    expect((await openai.batches.list()).data.map((b) => b.id)).to.deep.equal([done.id]);
    // a file the org does not have stays a 404
    const missing = await call('POST', '/v1/batches', { headers: keyHeader(o.key), json: { input_file_id: 'file-nope', endpoint: '/v1/embeddings', completion_window: '24h' } });
    expect(missing.status).to.equal(404);
    expect(missing.body.error).to.include({ code: 'file_not_found', param: 'input_file_id' });
  });

  it("a key's rpm paces its batches, as the vendors' batch limits do, and fails no line: the lines over the minute wait (same request id) and run once it allows them, billed once each, in both dialects", async () => {
    const o = await buildOrg(env().redis);
    await updateKeyControls(env().redis, o.keyId, { rpm: 2 });
    const openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const anthropic = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
    const lines = Array.from({ length: 5 }, (_, i) => ({ custom_id: `e${i}`, method: 'POST', url: '/v1/embeddings', body: { model: 'sim-embed', input: `x ${i}` } }));
    const ob = await openai.batches.create({ input_file_id: await uploadBatchFile(openai, jsonl(lines)), endpoint: '/v1/embeddings', completion_window: '24h' });
    expect(await roomInMinute(20_000), 'the checks below fall in one rate-limit minute').to.equal(true);
    worker = await startBatchWorker();
    // two lines fit this minute; the others wait, none fails
    const waiting = await waitFor(async () => {
      const b = await openai.batches.retrieve(ob.id);
      return b.request_counts!.completed + b.request_counts!.failed >= 2 ? b : undefined;
    }, 30_000, 100);
    await new Promise((r) => setTimeout(r, 1500));
    const held = await openai.batches.retrieve(ob.id);
    expect(held.status, JSON.stringify(held)).to.equal('in_progress');
    expect(held.request_counts).to.deep.equal({ total: 5, completed: 2, failed: 0 });
    expect(waiting!.request_counts!.failed).to.equal(0);
    const mb = await anthropic.messages.batches.create({ requests: [0, 1].map((i) => ({ custom_id: `m${i}`, params: { model: 'sim-claude', max_tokens: 4, messages: [{ role: 'user' as const, content: 'x' }] } })) });
    await new Promise((r) => setTimeout(r, 1000));
    expect((await anthropic.messages.batches.retrieve(mb.id)).request_counts).to.include({ processing: 2, errored: 0 });
    // the limit raised (or the minute over): the waiting lines run
    await updateKeyControls(env().redis, o.keyId, { rpm: 100 });
    const done = await batchEnds(openai, ob.id, undefined, 40_000);
    expect(done.status).to.equal('completed');
    expect(done.request_counts).to.deep.equal({ total: 5, completed: 5, failed: 0 });
    expect(done.error_file_id ?? null).to.equal(null);
    const out = parseJsonl<{ custom_id: string; response: { status_code: number } }>(await (await openai.files.content(done.output_file_id!)).text());
    expect(out.map((l) => l.custom_id).sort()).to.deep.equal(lines.map((l) => l.custom_id));
    const billed = await billedOncePerLine(ob.id, 5, out.map((l) => (l as unknown as { id: string }).id));
    // each line's Activity row of its answer is there (a refusal's row under the same id does not hide it)
    const logged = await db().query<{ request_id: string }>(`SELECT request_id FROM request_logs WHERE batch_id = :id AND status = 200`, { type: QueryTypes.SELECT, replacements: { id: ob.id } });
    expect(logged.map((r) => r.request_id).sort()).to.deep.equal([...billed].sort());
    await waitFor(async () => (await anthropic.messages.batches.retrieve(mb.id)).processing_status === 'ended', 40_000, 200);
    expect((await anthropic.messages.batches.retrieve(mb.id)).request_counts).to.deep.equal({ processing: 0, succeeded: 2, errored: 0, canceled: 0, expired: 0 });
  });

  it("a line no minute of the key's tpm can serve (its input above the limit) is errored at once with the 429, not held until the batch expires; its shorter lines run", async () => {
    const o = await buildOrg(env().redis);
    await updateKeyControls(env().redis, o.keyId, { tpm: 40 });
    const openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const lines = [
      { custom_id: 'short', method: 'POST', url: '/v1/embeddings', body: { model: 'sim-embed', input: 'x' } },
      { custom_id: 'long', method: 'POST', url: '/v1/embeddings', body: { model: 'sim-embed', input: 'word '.repeat(400) } },
    ];
    expect(await roomInMinute(20_000)).to.equal(true);
    const ob = await openai.batches.create({ input_file_id: await uploadBatchFile(openai, jsonl(lines)), endpoint: '/v1/embeddings', completion_window: '24h' });
    worker = await startBatchWorker();
    const done = await batchEnds(openai, ob.id, undefined, 15_000);
    expect(done.request_counts).to.deep.equal({ total: 2, completed: 1, failed: 1 });
    const [err] = parseJsonl<{ custom_id: string; response: { status_code: number; body: { error: { code: string; message: string } } } }>(await (await openai.files.content(done.error_file_id!)).text());
    expect(err.custom_id).to.equal('long');
    expect(err.response.status_code).to.equal(429);
    expect(err.response.body.error.code).to.equal('rate_limit_exceeded');
  });

  it('a rate refusal no minute can serve says x-should-retry: false (an rpm of 0, input above the tpm), and the runner errors its line instead of holding it; a full minute holds it', () => {
    const held = (...a: Parameters<typeof rateExceeded>) => {
      const e = rateExceeded(...a);
      return { held: heldBack(e.code, mayRetry(e.headers), false), retryAfter: e.headers['Retry-After'] !== undefined };
    };
    expect(held('rpm', 'key', 2, 10, 1000)).to.deep.equal({ held: 'same', retryAfter: true });
    expect(held('rpm', 'member', 0, 10, 1000)).to.deep.equal({ held: undefined, retryAfter: false });
    expect(held('tpm', 'key', 100, 60, 1000)).to.deep.equal({ held: 'same', retryAfter: true });
    expect(held('tpm', 'key', 100, 101, 1000)).to.deep.equal({ held: undefined, retryAfter: false });
    expect(held('tpm', 'member', 1000, 5000, 1000)).to.deep.equal({ held: undefined, retryAfter: false });
  });

  it("an upload's filename comes back as the client sent it, in UTF-8 (the SDK's multipart filename parameter)", async () => {
    const o = await buildOrg(env().redis);
    const openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const name = 'données-批次-✓.jsonl';
    const f = await openai.files.create({ file: await toFile(Buffer.from(jsonl([{ custom_id: 'a', method: 'POST', url: '/v1/embeddings', body: {} }])), name), purpose: 'batch' });
    expect(f.filename).to.equal(name);
    expect((await openai.files.retrieve(f.id)).filename).to.equal(name);
    expect((await openai.files.list()).data.find((x) => x.id === f.id)!.filename).to.equal(name);
  });

  it("lines of a batch whose key no longer works: the refusal in the dialect's error shape, as the synchronous endpoint answers it (OpenAI type/param; Anthropic authentication_error)", async () => {
    const o = await buildOrg(env().redis);
    const openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const anthropic = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
    const ob = await openai.batches.create({
      input_file_id: await uploadBatchFile(openai, jsonl([{ custom_id: 'o1', method: 'POST', url: '/v1/chat/completions', body: { model: 'sim-chat', messages: [{ role: 'user', content: 'x' }] } }])),
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const mb = await anthropic.messages.batches.create({ requests: [{ custom_id: 'm1', params: { model: 'sim-claude', max_tokens: 4, messages: [{ role: 'user', content: 'x' }] } }] });
    // the synchronous endpoints' answers to the old secret
    const rotated = (await rotateApiKey(env().redis, o.keyId, 0))!;
    const syncOpenAI = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'x' }] } });
    const syncMessages = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' }, json: { model: 'sim-claude', max_tokens: 4, messages: [{ role: 'user', content: 'x' }] } });
    expect([syncOpenAI.status, syncMessages.status]).to.deep.equal([401, 401]);
    worker = await startBatchWorker();

    const openai2 = new OpenAI({ apiKey: rotated.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const done = await batchEnds(openai2, ob.id);
    const [errLine] = parseJsonl<{ response: { status_code: number; body: { error: Record<string, unknown> } } }>(await (await openai2.files.content(done.error_file_id!)).text());
    expect(errLine.response.status_code).to.equal(401);
    expect(Object.keys(errLine.response.body.error).sort()).to.deep.equal(Object.keys(syncOpenAI.body.error).sort());
    expect(errLine.response.body.error).to.include({ code: 'INVALID_API_KEY', type: 'invalid_request_error', param: null });

    const anthropic2 = new Anthropic({ apiKey: rotated.key, baseURL: env().gw.url, maxRetries: 0 });
    await waitFor(async () => (await anthropic2.messages.batches.retrieve(mb.id)).processing_status === 'ended', 30_000, 200);
    const rs: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const r of await anthropic2.messages.batches.results(mb.id)) rs.push(r);
    const r = rs[0].result;
    if (r.type !== 'errored') throw new Error(r.type);
    expect(r.error.type).to.equal('error');
    expect(Object.keys(r.error.error).sort()).to.deep.equal(Object.keys(syncMessages.body.error).sort());
    expect(r.error.error).to.include({ type: 'authentication_error', code: 'INVALID_API_KEY' });
  });
});
