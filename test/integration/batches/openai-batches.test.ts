import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { db } from '../../../shared/db/sequelize';
import { batchEnds, batchUsage, expectSwept, jsonl, parseJsonl, uploadBatchFile, batchSuite, QUICK_POLL_MS } from './helpers';

const stripIds = (b: Record<string, unknown>) => {
  const { id: _id, created: _created, ...rest } = b;
  return rest;
};

describe('OpenAI Batch API with the official client: files, batches, results, billing', function () {
  this.timeout(120_000);
  const s = batchSuite({ pollMs: QUICK_POLL_MS });

  it('a 200-line chat batch: every line answered once, bodies as the synchronous endpoint gives them, billed once at half price', async () => {
    const lines = Array.from({ length: 200 }, (_, i) => ({
      custom_id: `req-${i}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'sim-chat', messages: [{ role: 'user', content: `line ${i}: say something` }], max_tokens: 20 },
    }));
    const fileId = await uploadBatchFile(s.openai, jsonl(lines));
    const created = await s.openai.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { job: 'nightly' } });
    expect(created.status).to.equal('validating');
    expect(created.metadata).to.deep.equal({ job: 'nightly' });
    expect(created.model).to.equal(null); // not known before the lines are read
    const done = await batchEnds(s.openai, created.id);
    expect(done.status).to.equal('completed');
    expect(done.model).to.equal('sim-chat');
    expect(done.request_counts).to.deep.equal({ total: 200, completed: 200, failed: 0 });
    expect(done.error_file_id).to.equal(null);
    for (const k of ['in_progress_at', 'finalizing_at', 'completed_at'] as const) expect(done[k]).to.be.a('number');

    const out = parseJsonl<{ id: string; custom_id: string; response: { status_code: number; request_id: string; body: Record<string, unknown> }; error: null }>(
      await (await s.openai.files.content(done.output_file_id!)).text(),
    );
    expect(out.map((l) => l.custom_id).sort()).to.deep.equal(lines.map((l) => l.custom_id).sort());
    for (const l of out) {
      expect(l.error).to.equal(null);
      expect(l.response.status_code).to.equal(200);
      expect(l.id).to.equal(l.response.request_id);
      expect(l.response.body.model).to.equal('sim-chat');
    }
    // the same input, synchronously: the same body apart from ids and timing
    for (const i of [0, 57, 199]) {
      const sync = (await s.openai.chat.completions.create(lines[i].body as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming)) as unknown as Record<string, unknown>;
      const batched = out.find((l) => l.custom_id === `req-${i}`)!.response.body;
      expect(stripIds(batched)).to.deep.equal(stripIds(sync));
    }

    await usageSettled();
    const usage = await batchUsage(created.id);
    expect(usage).to.have.length(200);
    expect(new Set(usage.map((u) => u.request_id)).size).to.equal(200);
    expect(usage.map((u) => u.request_id).sort()).to.deep.equal(out.map((l) => l.id).sort());
    for (const u of usage) {
      expect(u.lane).to.equal('background');
      expect(u.units.batch).to.equal(1);
      const full = u.input_tokens * 0.5 + u.output_tokens * 1.5; // sim-chat's prices, micro-dollars per token
      expect(full + u.units.cost_micros).to.be.closeTo(full * 0.5, 1e-9);
    }
    // the Batch object's usage: the answered lines' totals, the tokens billed
    const bodies = out.map((l) => l.response.body.usage as { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens?: number }; completion_tokens_details?: { reasoning_tokens?: number } });
    const sum = (f: (u: (typeof bodies)[number]) => number | undefined) => bodies.reduce((n, u) => n + (f(u) ?? 0), 0);
    const input = sum((u) => u.prompt_tokens);
    const output = sum((u) => u.completion_tokens);
    expect(input).to.be.greaterThan(0);
    expect(output).to.be.greaterThan(0);
    expect((await s.openai.batches.retrieve(created.id)).usage).to.deep.equal({
      input_tokens: input,
      input_tokens_details: { cached_tokens: sum((u) => u.prompt_tokens_details?.cached_tokens) },
      output_tokens: output,
      output_tokens_details: { reasoning_tokens: sum((u) => u.completion_tokens_details?.reasoning_tokens) },
      total_tokens: input + output,
    });
    expect(usage.reduce((n, u) => n + u.input_tokens, 0)).to.equal(input);
    expect(usage.reduce((n, u) => n + u.output_tokens, 0)).to.equal(output);
  });

  it('an embeddings batch: vectors as the synchronous endpoint gives them, usage attributed to the project and key that created it', async () => {
    const inProject = new OpenAI({ apiKey: s.o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0, defaultHeaders: { 'service-project-id': s.o.project.id } });
    const lines = Array.from({ length: 30 }, (_, i) => ({ custom_id: `e${i}`, method: 'POST', url: '/v1/embeddings', body: { model: 'sim-embed', input: `text number ${i}`, encoding_format: 'float' } }));
    const b = await inProject.batches.create({ input_file_id: await uploadBatchFile(inProject, jsonl(lines)), endpoint: '/v1/embeddings', completion_window: '24h' });
    const done = await batchEnds(s.openai, b.id);
    expect(done.status).to.equal('completed');
    expect(done.request_counts).to.deep.equal({ total: 30, completed: 30, failed: 0 });
    const out = parseJsonl<{ custom_id: string; response: { body: { data: { embedding: number[] }[]; model: string; usage: unknown } } }>(await (await s.openai.files.content(done.output_file_id!)).text());
    const sync = await s.openai.embeddings.create({ model: 'sim-embed', input: 'text number 7', encoding_format: 'float' });
    const e7 = out.find((l) => l.custom_id === 'e7')!.response.body;
    expect(e7.model).to.equal('sim-embed');
    expect(e7.data[0].embedding).to.deep.equal(sync.data[0].embedding);
    expect(e7.usage).to.deep.equal(sync.usage);
    await usageSettled();
    const usage = await batchUsage(b.id);
    expect(usage).to.have.length(30);
    expect(usage.every((u) => u.project_id === s.o.project.id && u.api_key_id === s.o.keyId && u.model === 'sim-embed')).to.equal(true);
    const input = out.reduce((n, l) => n + (l.response.body.usage as { prompt_tokens: number }).prompt_tokens, 0);
    expect(input).to.be.greaterThan(0);
    const listed = (await s.openai.batches.list({ limit: 100 })).data.find((x) => x.id === b.id)!;
    expect(listed.usage).to.deep.equal({ input_tokens: input, input_tokens_details: { cached_tokens: 0 }, output_tokens: 0, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: input });
    expect(listed.model).to.equal('sim-embed');
  });

  /** A body without its ids and timestamps (a Response's completed_at too), at any depth (responses' output items carry ids too). */
  const withoutIds = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(withoutIds) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).filter(([k]) => !['id', 'created', 'created_at', 'completed_at'].includes(k)).map(([k, x]) => [k, withoutIds(x)])) : v;
  for (const [endpoint, body] of [
    ['/v1/responses', { model: 'sim-chat', input: 'a responses line', max_output_tokens: 20 }],
    ['/v1/completions', { model: 'sim-chat', prompt: 'a completions line', max_tokens: 20 }],
  ] as const) {
    it(`a ${endpoint} batch: bodies as the synchronous endpoint gives them`, async () => {
      const lines = Array.from({ length: 5 }, (_, i) => ({ custom_id: `x${i}`, method: 'POST', url: endpoint, body }));
      const b = await s.openai.batches.create({ input_file_id: await uploadBatchFile(s.openai, jsonl(lines)), endpoint, completion_window: '24h' });
      const done = await batchEnds(s.openai, b.id);
      expect(done.request_counts).to.deep.equal({ total: 5, completed: 5, failed: 0 });
      const out = parseJsonl<{ response: { body: Record<string, unknown> } }>(await (await s.openai.files.content(done.output_file_id!)).text());
      const sync = (await (await fetch(`${env().gw.url}${endpoint}`, { method: 'POST', headers: { 'SERVICE-API-KEY': s.o.key, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as Record<string, unknown>;
      expect(withoutIds(out[0].response.body)).to.deep.equal(withoutIds(sync));
      expect(JSON.stringify(out[0].response.body)).to.include('"usage"');
      expect(out[0].response.body.model).to.equal('sim-chat');
      await usageSettled();
      expect(await batchUsage(b.id)).to.have.length(5);
      // the batch's usage totals, from whichever usage shape the endpoint answers
      const shaped = out.map((l) => l.response.body.usage as Record<string, number>);
      const input = shaped.reduce((n, u) => n + (u.prompt_tokens ?? u.input_tokens), 0);
      const output = shaped.reduce((n, u) => n + (u.completion_tokens ?? u.output_tokens), 0);
      expect(input * output).to.be.greaterThan(0);
      expect(done.usage).to.include({ input_tokens: input, output_tokens: output, total_tokens: input + output });
    });
  }

  it('lines the endpoint refuses go to the error file with its status and error body, and are not billed', async () => {
    const lines = [
      { custom_id: 'ok', method: 'POST', url: '/v1/chat/completions', body: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] } },
      { custom_id: 'no-model', method: 'POST', url: '/v1/chat/completions', body: { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] } },
      { custom_id: 'bad-body', method: 'POST', url: '/v1/chat/completions', body: { model: 'sim-chat', messages: 'not a list' } },
    ];
    const b = await s.openai.batches.create({ input_file_id: await uploadBatchFile(s.openai, jsonl(lines)), endpoint: '/v1/chat/completions', completion_window: '24h' });
    const done = await batchEnds(s.openai, b.id);
    expect(done.status).to.equal('completed');
    expect(done.request_counts).to.deep.equal({ total: 3, completed: 1, failed: 2 });
    expect(done.model).to.equal(null); // its lines name two models (OpenAI's batch guide takes one per file)
    const errs = parseJsonl<{ custom_id: string; response: { status_code: number; body: { error: { code: string } } } }>(await (await s.openai.files.content(done.error_file_id!)).text());
    expect(errs.map((e) => [e.custom_id, e.response.status_code, e.response.body.error.code])).to.deep.equal([
      ['no-model', 404, 'model_not_found'],
      ['bad-body', 400, 'invalid_type'], // OpenAI's code for messages of the wrong type, as the route answers it
    ]);
    await usageSettled();
    const billed = await batchUsage(b.id);
    expect(billed.length).to.equal(1);
    // refused lines count in no usage total
    expect(done.usage).to.include({ input_tokens: billed[0].input_tokens, output_tokens: billed[0].output_tokens });
  });

  it('malformed input lines fail the batch with one error per line, numbered as in the file (blank lines counted), nothing run or billed', async () => {
    const text = [
      '',
      JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: { model: 'sim-chat', messages: [] } }),
      '   ',
      '{not json',
      JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: {} }),
      '',
      JSON.stringify({ custom_id: 'c', method: 'GET', url: '/v1/chat/completions', body: {} }),
      JSON.stringify({ custom_id: 'd', method: 'POST', url: '/v1/embeddings', body: {} }) + '\r',
    ].join('\n');
    const b = await s.openai.batches.create({ input_file_id: await uploadBatchFile(s.openai, text), endpoint: '/v1/chat/completions', completion_window: '24h' });
    const done = await batchEnds(s.openai, b.id);
    expect(done.status).to.equal('failed');
    expect(done.errors!.data!.map((e) => [e.line, e.code, e.message])).to.deep.equal([
      [4, 'invalid_json_line', 'Line 4 is not valid JSON.'],
      [5, 'duplicate_custom_id', "Line 5: the custom_id 'a' is used by an earlier line."],
      [7, 'invalid_method', 'Line 7: `method` must be "POST".'],
      [8, 'mismatched_url', 'Line 8: `url` must be the batch\'s endpoint, /v1/chat/completions.'],
    ]);
    expect(done.request_counts).to.deep.equal({ total: 0, completed: 0, failed: 0 });
    expect(env().sim.log.entries).to.have.length(0);
  });

  it('a line whose body is nested deeper than a request body may be fails the batch at validation (it used to stay validating forever), nothing run or billed', async () => {
    // written as text: JSON.stringify itself overflows the stack on 20,000 levels
    const line = (id: string, depth: number) =>
      JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], metadata: { x: 'DEEP' } } }).replace('"DEEP"', '['.repeat(depth) + ']'.repeat(depth));
    const text = [line('ok', 100), line('deep', 20_000)].join('\n');
    const b = await s.openai.batches.create({ input_file_id: await uploadBatchFile(s.openai, text), endpoint: '/v1/chat/completions', completion_window: '24h' });
    const done = await batchEnds(s.openai, b.id, undefined, 20_000);
    expect(done.status).to.equal('failed');
    expect(done.errors!.data!.map((e) => [e.line, e.code, e.param, e.message])).to.deep.equal([[2, 'invalid_request', 'body', 'Line 2: `body` is nested deeper than 128 levels.']]);
    expect(done.request_counts).to.deep.equal({ total: 0, completed: 0, failed: 0 });
    expect(env().sim.log.entries).to.have.length(0);
  });

  it('files: list (cursor), retrieve, content, delete; batches: list with a cursor', async () => {
    const other = await buildOrg(env().redis);
    const stranger = new OpenAI({ apiKey: other.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await uploadBatchFile(s.openai, jsonl([{ custom_id: `x${i}`, method: 'POST', url: '/v1/embeddings', body: {} }])));
    const page = await s.openai.files.list({ limit: 2 });
    expect(page.data.map((f) => f.id)).to.deep.equal([ids[2], ids[1]]);
    expect(page.hasNextPage()).to.equal(true);
    const next = await page.getNextPage();
    expect(next.data[0].id).to.equal(ids[0]);
    const f = await s.openai.files.retrieve(ids[1]);
    expect(f).to.include({ id: ids[1], object: 'file', purpose: 'batch', filename: 'input.jsonl', status: 'processed' });
    expect(await (await s.openai.files.content(ids[1])).text()).to.contain('"custom_id":"x1"');
    // another org's key sees none of it
    try {
      await stranger.files.retrieve(ids[1]);
      expect.fail('another org must not see the file');
    } catch (err) {
      expect((err as InstanceType<typeof OpenAI.NotFoundError>).status).to.equal(404);
      expect((err as InstanceType<typeof OpenAI.NotFoundError>).code).to.equal('file_not_found');
    }
    expect(await s.openai.files.delete(ids[1])).to.deep.equal({ id: ids[1], object: 'file', deleted: true });
    try {
      await s.openai.files.retrieve(ids[1]);
      expect.fail('deleted');
    } catch (err) {
      expect((err as { status: number }).status).to.equal(404);
    }
    const batches = await s.openai.batches.list({ limit: 2 });
    expect(batches.data).to.have.length(2);
    const rest = await batches.getNextPage();
    expect(rest.data.map((b) => b.id)).to.not.include.members(batches.data.map((b) => b.id));
    expect((await stranger.batches.list()).data).to.have.length(0);
  });

  it('files past their retention (BATCH_FILE_RETENTION_DAYS) are swept by the clock, row and bytes', async () => {
    const id = await uploadBatchFile(s.openai, jsonl([{ custom_id: 'old', method: 'POST', url: '/v1/embeddings', body: {} }]));
    const keep = await uploadBatchFile(s.openai, jsonl([{ custom_id: 'new', method: 'POST', url: '/v1/embeddings', body: {} }]));
    expect((await s.openai.files.retrieve(id)).expires_at! - Math.floor(Date.now() / 1000)).to.be.closeTo(30 * 86_400, 5);
    await db().query("UPDATE batch_files SET expires_at = now() - interval '1 second' WHERE id = :id", { replacements: { id } });
    await expectSwept(s.openai, id, keep);
  });

  it("fair share: a small batch of another org finishes while a large one is still running", async () => {
    env().sim.knobs.set('sim-chat-1', { delayMs: 50 });
    const big = await s.openai.batches.create({ input_file_id: await uploadBatchFile(s.openai, jsonl(Array.from({ length: 300 }, (_, i) => ({ custom_id: `b${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'sim-chat', messages: [{ role: 'user', content: `b ${i}` }] } })))), endpoint: '/v1/chat/completions', completion_window: '24h' });
    await waitFor(async () => ((await s.openai.batches.retrieve(big.id)).request_counts?.completed ?? 0) >= 10, 30_000, 20);
    const other = await buildOrg(env().redis);
    const small = new OpenAI({ apiKey: other.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const sb = await small.batches.create({ input_file_id: await uploadBatchFile(small, jsonl(Array.from({ length: 16 }, (_, i) => ({ custom_id: `s${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'sim-chat', messages: [{ role: 'user', content: `s ${i}` }] } })))), endpoint: '/v1/chat/completions', completion_window: '24h' });
    const sDone = await batchEnds(small, sb.id);
    expect(sDone.request_counts).to.deep.equal({ total: 16, completed: 16, failed: 0 });
    const bigNow = await s.openai.batches.retrieve(big.id);
    expect(bigNow.status).to.equal('in_progress');
    expect(bigNow.request_counts!.completed).to.be.below(300);
    await batchEnds(s.openai, big.id);
  });

  it('cancel mid-way: lines not started are cancelled into the error file, what ran is delivered and billed once', async () => {
    env().sim.knobs.set('sim-chat-1', { delayMs: 150 });
    const lines = Array.from({ length: 60 }, (_, i) => ({ custom_id: `c${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'sim-chat', messages: [{ role: 'user', content: `c ${i}` }] } }));
    const b = await s.openai.batches.create({ input_file_id: await uploadBatchFile(s.openai, jsonl(lines)), endpoint: '/v1/chat/completions', completion_window: '24h' });
    await waitFor(async () => ((await s.openai.batches.retrieve(b.id)).request_counts?.completed ?? 0) >= 5, 30_000, 50);
    const cancelling = await s.openai.batches.cancel(b.id);
    expect(['cancelling', 'cancelled']).to.include(cancelling.status);
    const done = await batchEnds(s.openai, b.id);
    expect(done.status).to.equal('cancelled');
    expect(done.cancelled_at).to.be.a('number');
    const ran = done.request_counts!.completed;
    expect(ran).to.be.within(5, 59);
    const errs = parseJsonl<{ error: { code: string } }>(await (await s.openai.files.content(done.error_file_id!)).text());
    expect(errs).to.have.length(60 - ran);
    expect(errs.every((e) => e.error.code === 'batch_cancelled')).to.equal(true);
    await usageSettled();
    expect(await batchUsage(b.id)).to.have.length(ran);
  });
});
