import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { usageSettled } from '../../helpers/usage';
import { RoutingPlan } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { revokeApiKey, rotateApiKey } from '../../../shared/tenancy/ops';
import { archiveProject } from '../../../shared/tenancy/projects';
import { startBatchWorker } from '../../../workers/batch/main';
import { batchEnds, batchUsage, jsonl, parseJsonl, uploadBatchFile, type BatchWorker } from './helpers';
import { batchById, finishedLines } from '../../../shared/batches/store';
import { QueryTypes } from 'sequelize';
import { db } from '../../../shared/db/sequelize';

const line = (i: number, model: string) => ({ custom_id: `a${i}`, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content: `a ${i}` }] } });

/** The batch's lines, once it completes, all errored with `status` and `code`, none sent upstream nor billed. */
async function linesRefused(batchId: string, status: number, code: string): Promise<void> {
  for (let i = 0; i < 100 && !['completed'].includes((await batchById(batchId))!.status); i++) await new Promise((r) => setTimeout(r, 200));
  const lines = await finishedLines(batchId);
  expect(lines.map((l) => [l.state, l.status_code, (l.result as { error?: { code: string } }).error?.code])).to.deep.equal(lines.map(() => ['errored', status, code]));
  expect(lines).to.have.length(2);
  expect(env().sim.log.entries).to.have.length(0);
  await usageSettled();
  expect(await batchUsage(batchId)).to.have.length(0);
}

describe('batches: the auth surfaces of every inference route, and a key revoked mid-batch', function () {
  this.timeout(60_000);
  let o: TestOrg;
  let worker: BatchWorker | undefined;
  before(async () => {
    o = await buildOrg(env().redis);
  });
  afterEach(async () => {
    await worker?.close();
    worker = undefined;
  });
  beforeEach(resetSim);

  it("a routing plan's path (/r/{plan}): its aliases resolve in every line, answered with the alias", async () => {
    const plan = await RoutingPlan.create({ orgId: o.org.id, name: 'batch-plan', modelMap: { fast: 'sim-chat' }, projectId: null } as never);
    await bumpEpoch(env().redis);
    const viaPlan = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/r/${plan.id}/v1`, maxRetries: 0 });
    const b = await viaPlan.batches.create({ input_file_id: await uploadBatchFile(viaPlan, jsonl([line(0, 'fast'), line(1, 'fast')])), endpoint: '/v1/chat/completions', completion_window: '24h' });
    worker = await startBatchWorker();
    const done = await batchEnds(viaPlan, b.id);
    expect(done.request_counts).to.deep.equal({ total: 2, completed: 2, failed: 0 });
    const out = parseJsonl<{ response: { body: { model: string } } }>(await (await viaPlan.files.content(done.output_file_id!)).text());
    expect(out.map((l) => l.response.body.model)).to.deep.equal(['fast', 'fast']);
    // the same alias without the plan is an unknown model
    const plain = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const b2 = await plain.batches.create({ input_file_id: await uploadBatchFile(plain, jsonl([line(0, 'fast')])), endpoint: '/v1/chat/completions', completion_window: '24h' });
    const d2 = await batchEnds(plain, b2.id);
    expect(d2.request_counts).to.deep.equal({ total: 1, completed: 0, failed: 1 });
  });

  it('the key in the path (/a/{key}/p/{project}) for Message Batches: usage attributed to that project; the SDK reads the results at results_url', async () => {
    const client = new Anthropic({ apiKey: 'unused-provider-key', baseURL: `${env().gw.url}/a/${o.key}/p/proj`, maxRetries: 0 });
    const b = await client.messages.batches.create({ requests: [{ custom_id: 'p1', params: { model: 'sim-claude', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] } }] });
    worker = await startBatchWorker();
    for (let i = 0; i < 100 && (await client.messages.batches.retrieve(b.id)).processing_status !== 'ended'; i++) await new Promise((r) => setTimeout(r, 200));
    const ended = await client.messages.batches.retrieve(b.id);
    expect(ended.request_counts.succeeded).to.equal(1);
    // results() fetches the absolute results_url: it keeps the prefix the request came in on
    expect(ended.results_url).to.equal(`${env().gw.url}/a/${o.key}/p/proj/v1/messages/batches/${b.id}/results`);
    const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const r of await client.messages.batches.results(b.id)) results.push(r);
    expect(results.map((r) => [r.custom_id, r.result.type])).to.deep.equal([['p1', 'succeeded']]);
    // a caller with the key in a header gets the URL without the prefix (never another caller's key)
    const viaHeader = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
    expect((await viaHeader.messages.batches.list()).data.find((x) => x.id === b.id)!.results_url).to.equal(`${env().gw.url}/v1/messages/batches/${b.id}/results`);
    await usageSettled();
    const usage = await batchUsage(b.id);
    expect(usage.map((u) => [u.project_id, u.api_key_id])).to.deep.equal([[o.project.id, o.keyId]]);
  });

  it('a key revoked before its lines run: the remaining lines are errored 401 INVALID_API_KEY, none billed, each with its Activity row', async () => {
    const own = await buildOrg(env().redis);
    const openai = new OpenAI({ apiKey: own.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const b = await openai.batches.create({ input_file_id: await uploadBatchFile(openai, jsonl([line(0, 'sim-chat'), line(1, 'sim-chat')])), endpoint: '/v1/chat/completions', completion_window: '24h' });
    await revokeApiKey(env().redis, own.keyId);
    worker = await startBatchWorker();
    // the revoked key cannot read its batch any more: read it from the database
    for (let i = 0; i < 100 && !['completed'].includes((await batchById(b.id))!.status); i++) await new Promise((r) => setTimeout(r, 200));
    const lines = await finishedLines(b.id);
    expect(lines.map((l) => [l.state, l.status_code, (l.result as { error: { code: string } }).error.code])).to.deep.equal([
      ['errored', 401, 'INVALID_API_KEY'],
      ['errored', 401, 'INVALID_API_KEY'],
    ]);
    expect(env().sim.log.entries).to.have.length(0);
    await usageSettled();
    expect(await batchUsage(b.id)).to.have.length(0);
    const rows = await db().query<Record<string, unknown>>('SELECT * FROM request_logs WHERE batch_id = :id ORDER BY request_id', { type: QueryTypes.SELECT, replacements: { id: b.id } });
    expect(rows.map((r) => r.request_id), 'one row a line, under the line\'s request id').to.deep.equal(lines.map((l) => l.request_id).sort());
    const project = (await batchById(b.id))!.project_id;
    for (const r of rows) {
      expect(r).to.deep.include({ org_id: own.org.id, project_id: project, api_key_id: own.keyId, model: 'sim-chat', route: '/v1/chat/completions', dialect: 'openai-chat', status: 401, error_code: 'INVALID_API_KEY', input_tokens: 0, output_tokens: 0 });
    }
  });
  it("a key rotated after its batch was made (the old secret's grace over): the remaining lines are errored 401 INVALID_API_KEY, none sent", async () => {
    const own = await buildOrg(env().redis);
    const openai = new OpenAI({ apiKey: own.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const b = await openai.batches.create({ input_file_id: await uploadBatchFile(openai, jsonl([line(0, 'sim-chat'), line(1, 'sim-chat')])), endpoint: '/v1/chat/completions', completion_window: '24h' });
    // rotated with no grace (a leaked secret): the old secret no longer authenticates anywhere
    const rotated = (await rotateApiKey(env().redis, own.keyId, 0))!;
    expect((await fetch(`${env().gw.url}/v1/batches/${b.id}`, { headers: { 'SERVICE-API-KEY': own.key } })).status).to.equal(401);
    worker = await startBatchWorker();
    await linesRefused(b.id, 401, 'INVALID_API_KEY');
    // the new secret reads the batch (same key id, same org)
    expect((await fetch(`${env().gw.url}/v1/batches/${b.id}`, { headers: { 'SERVICE-API-KEY': rotated.key } })).status).to.equal(200);
  });
  it('a project archived after its batch was made in it (SERVICE-PROJECT-ID): the remaining lines are errored 400 invalid_project, none sent nor billed', async () => {
    const own = await buildOrg(env().redis);
    const openai = new OpenAI({ apiKey: own.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0, defaultHeaders: { 'SERVICE-PROJECT-ID': 'proj' } });
    const b = await openai.batches.create({ input_file_id: await uploadBatchFile(openai, jsonl([line(0, 'sim-chat'), line(1, 'sim-chat')])), endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect((await batchById(b.id))!.project_id).to.equal(own.project.id);
    // the owner archives the project: its requests are refused from now on, the batch's lines included
    await archiveProject(env().redis, own.org.id, own.project.id);
    worker = await startBatchWorker();
    await linesRefused(b.id, 400, 'invalid_project');
  });
});
