import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import { QueryTypes } from 'sequelize';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { expectErrorEnvelope } from '../../helpers/errors';
import { waitFor } from '../../helpers/wait';
import { usageSettled } from '../../helpers/usage';
import { db } from '../../../shared/db/sequelize';
import { setSwitch } from '../../../shared/switches/switches';
import { startBatchWorker } from '../../../workers/batch/main';
import { batchEnds, jsonl, uploadBatchFile } from './helpers';

const line = (i: number) => ({ custom_id: `r${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'sim-chat', messages: [{ role: 'user', content: `r ${i}` }] } });
const anthropic = (key: string) => ({ ...keyHeader(key), 'anthropic-version': '2023-06-01' });

async function orgRows(o: TestOrg): Promise<{ batches: number; usage: number }> {
  await usageSettled();
  const [r] = await db().query<{ batches: string; usage: string }>(
    'SELECT (SELECT count(*) FROM batches WHERE org_id = :org) AS batches, (SELECT count(*) FROM usage_events WHERE org_id = :org) AS usage',
    { type: QueryTypes.SELECT, replacements: { org: o.org.id } },
  );
  return { batches: Number(r.batches), usage: Number(r.usage) };
}

describe('batches: refusals (limits, kill switch, bad input) in the spec envelope, nothing stored or billed', function () {
  this.timeout(60_000);
  let o: TestOrg;
  let openai: OpenAI;
  before(async () => {
    o = await buildOrg(env().redis, { entitlements: { background: true, batch_max_lines: 3, batch_max_file_bytes: 2048, batch_max_in_progress: 1 } });
    openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  beforeEach(resetSim);

  it('a file over the org cap: 413 file_too_large, nothing stored', async () => {
    try {
      await openai.files.create({ file: await toFile(Buffer.alloc(4096, 'a'), 'big.jsonl'), purpose: 'batch' });
      expect.fail('should be refused');
    } catch (err) {
      const e = err as InstanceType<typeof OpenAI.APIError>;
      expect(e.status).to.equal(413);
      expect(e.code).to.equal('file_too_large');
    }
    expect((await openai.files.list()).data).to.have.length(0);
  });

  it('bad uploads and bad create bodies: 400 with the code, 404 for a file the org does not have', async () => {
    const form = new FormData();
    form.set('purpose', 'fine-tune');
    form.set('file', new Blob(['{}\n']), 'x.jsonl');
    const bad = await fetch(`${env().gw.url}/v1/files`, { method: 'POST', headers: keyHeader(o.key), body: form });
    expect(bad.status).to.equal(400);
    expectErrorEnvelope(await bad.text(), 'invalid_request');
    const id = await uploadBatchFile(openai, jsonl([line(0)]));
    const wrongEndpoint = await call('POST', '/v1/batches', { headers: keyHeader(o.key), json: { input_file_id: id, endpoint: '/v1/images/generations', completion_window: '24h' } });
    expect(wrongEndpoint.status).to.equal(400);
    expectErrorEnvelope(wrongEndpoint.text, 'invalid_request');
    const wrongWindow = await call('POST', '/v1/batches', { headers: keyHeader(o.key), json: { input_file_id: id, endpoint: '/v1/chat/completions', completion_window: '48h' } });
    expect(wrongWindow.status).to.equal(400);
    const other = await buildOrg(env().redis);
    const stranger = await call('POST', '/v1/batches', { headers: keyHeader(other.key), json: { input_file_id: id, endpoint: '/v1/chat/completions', completion_window: '24h' } });
    expect(stranger.status).to.equal(404);
    expectErrorEnvelope(stranger.text, 'file_not_found');
    const noKey = await call('GET', '/v1/batches');
    expect(noKey.status).to.equal(401);
    expectErrorEnvelope(noKey.text, 'INVALID_API_KEY');
    const dup = await call('POST', '/v1/messages/batches', { headers: anthropic(o.key), json: { requests: [{ custom_id: 'a', params: {} }, { custom_id: 'a', params: {} }] } });
    expect(dup.status).to.equal(400);
    const noVersion = await call('POST', '/v1/messages/batches', { headers: keyHeader(o.key), json: { requests: [{ custom_id: 'a', params: {} }] } });
    expect(noVersion.status).to.equal(400);
    expectErrorEnvelope(noVersion.text, 'anthropic_version_required');
    expect(await orgRows(o)).to.deep.equal({ batches: 0, usage: 0 });
  });

  it("a Message Batch body over the org's batch_max_file_bytes: 413 request_too_large, as its uploads are (the body cap was the gateway default's), nothing stored", async () => {
    const requests = [0, 1, 2].map((i) => ({ custom_id: `b${i}`, params: { model: 'sim-claude', max_tokens: 8, messages: [{ role: 'user', content: 'x'.repeat(1000) }] } }));
    expect(JSON.stringify({ requests }).length).to.be.above(2048);
    const m = await call('POST', '/v1/messages/batches', { headers: anthropic(o.key), json: { requests } });
    expect(m.status, m.text).to.equal(413);
    expectErrorEnvelope(m.text, 'payload_too_large');
    expect(m.body.error.type).to.equal('request_too_large');
    expect(await orgRows(o)).to.deep.equal({ batches: 0, usage: 0 });
  });

  it('more lines than the org may batch: 400 batch_too_many_lines, in both dialects', async () => {
    const id = await uploadBatchFile(openai, jsonl([line(0), line(1), line(2), line(3)]));
    const r = await call('POST', '/v1/batches', { headers: keyHeader(o.key), json: { input_file_id: id, endpoint: '/v1/chat/completions', completion_window: '24h' } });
    expect(r.status).to.equal(400);
    expectErrorEnvelope(r.text, 'batch_too_many_lines');
    const requests = [0, 1, 2, 3].map((i) => ({ custom_id: `m${i}`, params: { model: 'sim-claude', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] } }));
    const m = await call('POST', '/v1/messages/batches', { headers: anthropic(o.key), json: { requests } });
    expect(m.status).to.equal(400);
    expectErrorEnvelope(m.text, 'batch_too_many_lines');
    expect(m.body.error.type).to.equal('invalid_request_error');
    expect(await orgRows(o)).to.deep.equal({ batches: 0, usage: 0 });
  });

  it('over the in-progress cap: 429 batch_limit_exceeded; kill switch: 503 batches_disabled on every batch route and the runner starts no line until it is released', async () => {
    const fileId = await uploadBatchFile(openai, jsonl([line(0), line(1)]));
    const first = await openai.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const second = await call('POST', '/v1/batches', { headers: keyHeader(o.key), json: { input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' } });
    expect(second.status).to.equal(429);
    expectErrorEnvelope(second.text, 'batch_limit_exceeded');
    expect(Number(second.headers.get('retry-after'))).to.be.at.least(1);
    expect((await orgRows(o)).batches).to.equal(1);

    await setSwitch(env().redis, 'batches', true);
    const worker = await startBatchWorker();
    try {
      await waitFor(() => env().gw.ctx.switches.engaged('batches'), 3000);
      for (const [method, path] of [['GET', '/v1/files'], ['POST', '/v1/batches'], ['GET', `/v1/files/${fileId}/content`], ['GET', `/v1/batches/${first.id}`], ['GET', '/v1/messages/batches']]) {
        const r = await call(method, path, { headers: anthropic(o.key), json: method === 'POST' ? {} : undefined });
        expect(r.status, path).to.equal(503);
        expectErrorEnvelope(r.text, 'batches_disabled');
        expect(Number(r.headers.get('retry-after'))).to.be.at.least(1);
      }
      await new Promise((r) => setTimeout(r, 1500)); // three runner polls
      expect(env().sim.log.entries).to.have.length(0);
      await setSwitch(env().redis, 'batches', false);
      await waitFor(() => !env().gw.ctx.switches.engaged('batches'), 3000);
      const done = await batchEnds(openai, first.id);
      expect(done.request_counts).to.deep.equal({ total: 2, completed: 2, failed: 0 });
    } finally {
      await setSwitch(env().redis, 'batches', false);
      await worker.close();
    }
  });

  it('a list parameter given twice (after, purpose, order, after_id, before_id, limit): 400 invalid_request naming it, never a 500', async () => {
    const cases: Array<[string, string, Record<string, string>]> = [
      ['/v1/files?purpose=batch&purpose=x', 'purpose', keyHeader(o.key)],
      ['/v1/files?after=a&after=b', 'after', keyHeader(o.key)],
      ['/v1/files?order=asc&order=desc', 'order', keyHeader(o.key)],
      ['/v1/batches?after=a&after=b', 'after', keyHeader(o.key)],
      ['/v1/batches?limit=2&limit=3', 'limit', keyHeader(o.key)],
      ['/v1/messages/batches?after_id=a&after_id=b', 'after_id', anthropic(o.key)],
      ['/v1/messages/batches?before_id=a&before_id=b', 'before_id', anthropic(o.key)],
    ];
    for (const [path, param, headers] of cases) {
      const r = await call('GET', path, { headers });
      expect(r.status, `${path}: ${r.text}`).to.equal(400);
      expectErrorEnvelope(r.text, 'invalid_request');
      expect(r.body.error.message, path).to.include(`\`${param}\``);
      if (!path.startsWith('/v1/messages')) expect(r.body.error.param, path).to.equal(param); // Anthropic's envelope has no param
    }
    expect((await call('GET', '/v1/files?purpose=batch&order=asc', { headers: keyHeader(o.key) })).status, 'each once: listed').to.equal(200);
  });

  it('an order that is neither asc nor desc: 400 invalid_request naming order on the files list, as on every other list (it listed descending)', async () => {
    for (const path of ['/v1/files?order=sideways', '/v1/chat/completions?order=sideways', '/v1/conversations/conv_x/items?order=sideways']) {
      const r = await call('GET', path, { headers: keyHeader(o.key) });
      expect(r.status, `${path}: ${r.text}`).to.equal(400);
      expectErrorEnvelope(r.text, 'invalid_request');
      expect(r.body.error.param, path).to.equal('order');
    }
  });
});
