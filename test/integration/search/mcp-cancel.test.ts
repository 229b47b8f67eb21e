import { expect } from 'chai';
import Redis from 'ioredis';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { env, resetSim, startGateway, type TestGateway } from '../../helpers/harness';
import { leasesFreed } from '../../helpers/leases';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { UsageEvent } from '../../../shared/db/models';
import { keys } from '../../../shared/redis/keys';
import { periodOf } from '../../../shared/search/period';
import { ledger, mcpPost, searchOrg, toolCall } from './helpers';

const searchesCounted = async (orgId: string) => Number(await env().redis.get(keys.searchCount(orgId, periodOf(), 'all')));
const upstream = (q: string) => env().sim.log.entries.find((e) => e.query.q === q);

/**
 * `notifications/cancelled` reaches the call it names on whichever pod runs it: the client sends it
 * as a POST of its own, here always to a second pod, while the call's POST stays open on the first.
 */
describe('MCP cancellation across pods', function () {
  this.timeout(30_000);
  let second: TestGateway;
  before(async () => {
    second = await startGateway('test-pod-mcp-cancel');
  });
  after(async () => second?.close());
  beforeEach(resetSim);
  afterEach(() => env().sim.knobs.reset());

  it('the official client cancels a web_search in flight: aborted upstream, lease and reservation given back, nothing billed', async () => {
    const o = await searchOrg();
    env().sim.knobs.set('*', { hold: true });
    const cancels: string[] = [];
    const routed: typeof fetch = (input, init) => {
      const url = new URL(String(input instanceof Request ? input.url : input));
      const cancel = typeof init?.body === 'string' && init.body.includes('"notifications/cancelled"');
      if (cancel) cancels.push(init.body as string);
      return fetch(`${cancel ? second.url : env().gw.url}${url.pathname}${url.search}`, init);
    };
    const client = new Client({ name: 'cancel-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${env().gw.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${o.key}` } }, fetch: routed }));
    try {
      const ac = new AbortController();
      const call = client.callTool({ name: 'web_search', arguments: { query: 'cancel me' } }, undefined, { signal: ac.signal }).then(
        () => 'answered',
        () => 'rejected',
      );
      expect(await waitFor(() => !!upstream('cancel me'), 5000), 'the search is upstream').to.equal(true);
      ac.abort('user cancelled');
      expect(await call).to.equal('rejected');
      expect(await waitFor(() => cancels.length === 1, 5000), 'the client sent notifications/cancelled (to the second pod)').to.equal(true);
      expect(await waitFor(() => upstream('cancel me')!.aborted, 5000), 'the provider call was aborted').to.equal(true);
      expect(await leasesFreed(env().gw.ctx.leases, o.org.id, 'search', 'default'), 'search lane lease back to zero').to.equal(true);
      expect(await waitFor(async () => (await searchesCounted(o.org.id)) === 0, 3000), 'search reservation given back').to.equal(true);
      env().sim.knobs.reset(); // releases the held request, holds no more
      expect(await ledger(o.org.id)).to.have.length(0);
      await usageSettled();
      expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'nothing billed').to.equal(0);
      // the client goes on
      const r = (await client.callTool({ name: 'web_search', arguments: { query: 'next' } })) as CallToolResult;
      expect(r.isError ?? false, JSON.stringify(r)).to.equal(false);
      expect(await ledger(o.org.id)).to.have.length(1);
    } finally {
      await client.close();
    }
  });

  it("in a batch the call is found under the caller's id; another key's cancel of the same id cancels nothing", async () => {
    const o = await searchOrg();
    const other = await searchOrg();
    env().sim.knobs.set('*', { hold: true });
    const sent = mcpPost(o.key, [toolCall('x', 'web_search', { query: 'keep' }), toolCall('y', 'web_search', { query: 'drop' }), toolCall('y', 'generate_image', { prompt: 'drop', size: '256x256' })]);
    expect(await waitFor(() => env().sim.log.entries.length === 3, 5000), 'all three calls upstream').to.equal(true);
    const cancel = (key: string, requestId: unknown) => mcpPost(key, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'test' } }, second.url);
    expect((await cancel(other.key, 'x')).status).to.equal(202);
    expect((await cancel(o.key, 'y')).status).to.equal(202);
    expect(await waitFor(() => env().sim.log.entries.filter((e) => e.aborted).length === 2, 5000), 'both calls with id y aborted upstream').to.equal(true);
    expect(upstream('keep')!.aborted).to.equal(false);
    env().sim.knobs.release();
    const r = await sent;
    expect(r.status).to.equal(200);
    const replies = (await r.json()) as { id: string; result: CallToolResult }[];
    expect(replies.map((x) => x.id)).to.deep.equal(['x', 'y', 'y']);
    expect((replies[0].result.structuredContent as { query: string }).query).to.equal('keep');
    for (const x of replies.slice(1)) {
      expect(x.result.isError, JSON.stringify(x)).to.equal(true);
      expect(JSON.parse((x.result.content[0] as { text: string }).text).error.code).to.equal('client_closed_request');
    }
    expect(await ledger(o.org.id)).to.have.length(1);
    expect(await searchesCounted(o.org.id), 'the cancelled search gave its reservation back').to.equal(1);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id, modality: 'image' } }), 'the cancelled image is not billed').to.equal(0);
    expect(await leasesFreed(env().gw.ctx.leases, o.org.id, 'images', 'interactive'), 'image lane lease back to zero').to.equal(true);
  });

  it('a POST of thousands of cancels makes one published message of at most 32 distinct ids, not one per cancel', async function () {
    this.timeout(30_000);
    const o = await searchOrg();
    await mcpPost(o.key, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'warm' } }); // the pod subscribes
    const sub = new Redis(process.env.REDIS_URL!);
    const messages: string[] = [];
    sub.on('smessage', (_ch: string, m: string) => messages.push(m));
    await sub.ssubscribe(keys.mcpCancelChannel());
    try {
      const batch = Array.from({ length: 5_000 }, (_, i) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: i % 100 } }));
      await mcpPost(o.key, batch);
      expect(await waitFor(() => messages.length > 0, 3_000)).to.equal(true);
      await new Promise((r) => setTimeout(r, 300));
      expect(messages, 'one message for the POST').to.have.length(1);
      const slots = JSON.parse(messages[0]) as string[];
      expect(slots).to.have.length(32);
      expect(new Set(slots).size).to.equal(32);
    } finally {
      sub.disconnect();
    }
  });
});
