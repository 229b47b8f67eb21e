import { expect } from 'chai';
import { execFile } from 'child_process';
import path from 'path';
import { promisify } from 'util';
import { env, resetSim, startGateway } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { waitFor } from '../../helpers/wait';
import { leasesFreed } from '../../helpers/leases';
import { UsageEvent } from '../../../shared/db/models';
import { setSwitch } from '../../../shared/switches/switches';
import { expectRejected, post } from './helpers';
import { usageSettled } from '../../helpers/usage';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../../../scripts/cli.js');
const gateway = (...args: string[]) => run(process.execPath, [cli, ...args], { env: process.env });

describe('embeddings and rerank: listings, kill switch, own lanes', () => {
  let o: TestOrg;
  before(async () => {
    o = await buildOrg(env().redis, { laneOverrides: { 'embeddings:default': 3 } });
  });
  beforeEach(resetSim);

  it('lists embedding models with declared limits and the org policy', async () => {
    const r = await call('GET', '/v1/embeddings/models', { headers: keyHeader(o.key) });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.object).to.equal('list');
    const ids = r.body.data.map((m: { id: string }) => m.id);
    expect(ids).to.include('sim-embed');
    expect(ids).not.to.include.members(['sim-chat', 'sim-rerank', 'sim-decide']);
    const m = r.body.data.find((x: { id: string }) => x.id === 'sim-embed');
    expect(m.limits).to.deep.equal({
      max_batch_size: 64, max_input_tokens: 512, max_tokens_per_request: 300_000, dimensions: 256, supports_dimensions: true,
      encoding_formats: ['float', 'base64'], max_request_bytes: 2 * 1024 * 1024,
    });
    expect(m.policy).to.deep.include({ enabled: true, max_concurrent_requests: 3, billing: 'metered', billed_unit: 'input_token' });
    expect(JSON.stringify(r.body)).not.to.include('sim-embed-1'); // upstream names are never shown
  });

  it('lists rerank models with declared limits and the org policy (plan default lane count)', async () => {
    const other = await buildOrg(env().redis);
    const r = await call('GET', '/v1/rerank/models', { headers: keyHeader(other.key) });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.data.map((m: { id: string }) => m.id)).to.deep.equal(['sim-rerank']);
    const m = r.body.data[0];
    expect(m.limits).to.deep.equal({ max_input_tokens: 512, max_documents: 1000, max_request_bytes: 2 * 1024 * 1024 });
    expect(m.policy).to.deep.include({ enabled: true, max_concurrent_requests: 16, billed_unit: 'search_unit', documents_per_search_unit: 100 });
    expect((await call('POST', '/v1/rerank/models', { headers: keyHeader(o.key) })).status).to.equal(405);
  });

  describe('the operator kill switch', () => {
    const routes = (): Array<Promise<Reply>> => [
      post(o.key, '/v1/embeddings', { model: 'sim-embed', input: 'x' }),
      post(o.key, '/v1/rerank', { model: 'sim-rerank', query: 'q', documents: ['a'] }),
      post(o.key, '/v2/rerank', { model: 'sim-rerank', query: 'q', documents: ['a'] }),
      post(o.key, '/v1/embeddings', { model: 'sim-embed', input: null }), // even a bad request gets the 503
      call('GET', '/v1/embeddings/models', { headers: keyHeader(o.key) }),
      call('GET', '/v1/rerank/models', { headers: keyHeader(o.key) }),
    ];
    afterEach(async () => {
      await setSwitch(env().redis, 'embeddings', false);
      await waitFor(async () => (await call('GET', '/v1/rerank/models', { headers: keyHeader(o.key) })).status === 200, 5000);
    });

    it('engaged with the CLI: every route answers 503 embeddings_disabled; released: service is back', async function () {
      this.timeout(30_000);
      await gateway('switch', 'engage', 'embeddings');
      // how fast pods follow is the switch board's own test (foundation/switch-follow)
      const off = await waitFor(async () => (await post(o.key, '/v1/embeddings', { model: 'sim-embed', input: 'x' })).status === 503, 5000, 20);
      expect(off, 'switch seen').to.equal(true);
      for (const r of await Promise.all(routes())) {
        await expectRejected(r, 503, 'embeddings_disabled');
        expect(r.headers.get('retry-after')).to.be.a('string');
      }
      expect(env().sim.log.entries).to.have.length(0);
      const chat = await post(o.key, '/v1/chat/completions', { model: 'sim-chat', messages: [{ role: 'user', content: 'still on' }] });
      expect(chat.status, 'other features are untouched').to.equal(200);

      await gateway('switch', 'release', 'embeddings');
      const on = await waitFor(async () => (await post(o.key, '/v1/embeddings', { model: 'sim-embed', input: 'x' })).status === 200, 5000, 20);
      expect(on, 'release seen').to.equal(true);
      const [e, r1, r2, bad, l1, l2] = await Promise.all(routes());
      expect([e.status, r1.status, r2.status, bad.status, l1.status, l2.status]).to.deep.equal([200, 200, 200, 400, 200, 200]);
    });

    it('engaged with setSwitch: a second pod follows too', async () => {
      const pod2 = await startGateway();
      try {
        const listing = (base: string) => call('GET', '/v1/embeddings/models', { headers: keyHeader(o.key), base });
        expect((await listing(pod2.url)).status).to.equal(200);
        await setSwitch(env().redis, 'embeddings', true);
        const both = async () => (await listing(pod2.url)).status === 503 && (await listing(env().gw.url)).status === 503;
        expect(await waitFor(both, 5000, 20)).to.equal(true);
      } finally {
        await pod2.close();
      }
    });
  });

  it('runs on the embeddings queue under an embeddings lane lease, never a chat lane; 429 embeddings_lanes_exhausted at the count', async () => {
    const one = await buildOrg(env().redis, { laneOverrides: { 'embeddings:default': 1, 'chat:interactive': 1 } });
    env().sim.knobs.set('sim-embed-1', { hold: true }); // the first request answers when released
    const leases = env().gw.ctx.leases;
    const first = post(one.key, '/v1/embeddings', { model: 'sim-embed', input: 'slow' });
    expect(await waitFor(() => env().sim.log.entries.length === 1, 10_000)).to.equal(true);
    expect(await leases.count(one.org.id, 'embeddings', 'default')).to.equal(1);
    expect(await leases.count(one.org.id, 'chat', 'interactive')).to.equal(0);
    expect(await leases.count(one.org.id, 'chat', 'background')).to.equal(0);

    const second = await post(one.key, '/v1/rerank', { model: 'sim-rerank', query: 'q', documents: ['a'] });
    await expectRejected(second, 429, 'embeddings_lanes_exhausted');
    expect(Number(second.headers.get('retry-after'))).to.be.at.least(1);
    const third = await post(one.key, '/v1/embeddings', { model: 'sim-embed', input: 'also refused' });
    await expectRejected(third, 429, 'embeddings_lanes_exhausted');
    expect(Number(third.headers.get('retry-after'))).to.be.at.least(1);
    expect(env().sim.log.entries, 'the refused requests reached no upstream').to.have.length(1);
    // The org's single chat lane is free while its embeddings lane is full.
    const chat = await post(one.key, '/v1/chat/completions', { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status, chat.text).to.equal(200);

    // the held request's job, read while it runs (a completed job is removed at once)
    const [job] = (await env().gw.ctx.queues.get('embeddings').getJobs(['active'])).filter((j) => j?.data.orgId === one.org.id);
    expect(job?.data).to.include({ operation: 'embed', orgId: one.org.id, lane: 'default', publicModel: 'sim-embed' });
    env().sim.knobs.release();
    const done = await first;
    expect(done.status, done.text).to.equal(200);
    const id = done.headers.get('x-service-request-id')!;
    expect(job.id, 'that job answered the request').to.equal(id);
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: id } })).to.equal(1);
    expect(await leasesFreed(leases, one.org.id, 'embeddings', 'default', 2000)).to.equal(true);
    const after = await post(one.key, '/v1/rerank', { model: 'sim-rerank', query: 'q', documents: ['a'] });
    expect(after.status, after.text).to.equal(200);
  });

  it('a chat flood at the chat lane count does not block embeddings', async () => {
    const one = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 1 } });
    env().sim.knobs.set('sim-chat-1', { hold: true }); // the chat request answers when released
    const chat = post(one.key, '/v1/chat/completions', { model: 'sim-chat', messages: [{ role: 'user', content: 'slow' }] });
    expect(await waitFor(() => env().sim.log.entries.length === 1, 10_000)).to.equal(true);
    expect(await env().gw.ctx.leases.count(one.org.id, 'chat', 'interactive'), 'the chat lane is full').to.equal(1);
    const e = await post(one.key, '/v1/embeddings', { model: 'sim-embed', input: 'fast' });
    expect(e.status, e.text).to.equal(200);
    env().sim.knobs.release();
    expect((await chat).status).to.equal(200);
  });
});
