import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { env, resetSim } from '../../helpers/harness';
import { expectErrorEnvelope } from '../../helpers/errors';
import { leasesFreed } from '../../helpers/leases';
import { usageSettled } from '../../helpers/usage';
import { producerDownPod, type ProducerDownPod } from '../../helpers/producer-down';
import { UsageEvent } from '../../../shared/db/models';
import { keys } from '../../../shared/redis/keys';
import { periodOf } from '../../../shared/search/period';
import { ledger, mcpPost, searchOrg, toolCall, type SearchOrg } from './helpers';

/**
 * MCP tool calls during a Redis outage (the pod's producer connection is on a redis-server the test
 * kills, so each job's enqueue fails after its lease and its search reservation were taken): answered
 * like the REST routes, 503 `service_unavailable` with Retry-After, never 500 `internal_error`; the
 * lease and the reservation are given back, nothing is billed.
 */
describe('MCP during a Redis outage', function () {
  this.timeout(30_000);
  let pod: ProducerDownPod;
  let o: SearchOrg;

  before(async () => {
    pod = await producerDownPod('mcp-outage');
    await pod.stopProducer();
  });
  after(() => pod.close());
  beforeEach(async () => {
    resetSim();
    o = await searchOrg();
  });

  const nothingLeftOrBilled = async (pool: string, lane: string) => {
    expect(await leasesFreed(pod.ctx.leases, o.org.id, pool, lane), `${pool} lease released`).to.equal(true);
    expect(Number(await env().redis.get(keys.searchCount(o.org.id, periodOf(), 'all'))), 'no search reservation kept').to.equal(0);
    expect(await ledger(o.org.id)).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'nothing billed').to.equal(0);
  };

  for (const [name, args, pool, lane] of [
    ['web_search', { query: 'q' }, 'search', 'default'],
    ['generate_image', { prompt: 'p', size: '256x256' }, 'images', 'interactive'],
  ] as const) {
    it(`a ${name} call: HTTP 503 service_unavailable with Retry-After, promptly; lease and reservation given back`, async () => {
      const t = Date.now();
      const r = await mcpPost(o.key, toolCall(1, name, args), pod.base);
      const text = await r.text();
      expect(r.status, text).to.equal(503);
      expectErrorEnvelope(text, 'service_unavailable');
      expect(Number(r.headers.get('retry-after'))).to.be.at.least(1);
      expect(Date.now() - t, 'failed fast, not at a deadline').to.be.below(5000);
      await nothingLeftOrBilled(pool, lane);
    });
  }

  it('the official client sees the 503 as an HTTP error it can retry on', async () => {
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${pod.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${o.key}` } } }));
    try {
      const err = await client.callTool({ name: 'web_search', arguments: { query: 'q' } }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(StreamableHTTPError);
      expect((err as StreamableHTTPError).code).to.equal(503);
    } finally {
      await client.close();
    }
    await nothingLeftOrBilled('search', 'default');
  });

  it('in a batch with a request that is answered: 200, and the call is a tool error service_unavailable with its status and retry_after', async () => {
    const r = await mcpPost(o.key, [{ jsonrpc: '2.0', id: 'list', method: 'tools/list' }, toolCall('s', 'web_search', { query: 'q' })], pod.base);
    expect(r.status).to.equal(200);
    const replies = (await r.json()) as Array<{ id: string; result: CallToolResult & { tools?: unknown[] } }>;
    expect(replies.find((x) => x.id === 'list')?.result.tools).to.have.length(2);
    const call = replies.find((x) => x.id === 's')!.result;
    expect(call.isError, JSON.stringify(call)).to.equal(true);
    const { error } = JSON.parse((call.content[0] as { text: string }).text) as { error: { code: string; status: number; retry_after: number } };
    expect(error.code).to.equal('service_unavailable');
    expect(error.status).to.equal(503);
    expect(error.retry_after).to.be.at.least(1);
    await nothingLeftOrBilled('search', 'default');
  });
});
