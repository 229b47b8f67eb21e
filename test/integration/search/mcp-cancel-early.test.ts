import { expect } from 'chai';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { env, resetSim, startGateway, type TestGateway } from '../../helpers/harness';
import { leasesFreed } from '../../helpers/leases';
import { waitFor } from '../../helpers/wait';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent, ApiKey } from '../../../shared/db/models';
import { keys } from '../../../shared/redis/keys';
import { KEEP_MS, MAX_KEPT_PER_KEY, memberOf } from '../../../api/routes/mcp/kept-cancels';
import { ledger, mcpPost, searchOrg, toolCall, type SearchOrg } from './helpers';

const upstream = (q: string) => env().sim.log.entries.find((e) => e.query.q === q);
const cancelMsg = (requestId: unknown) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'test' } });
const keyIdOf = async (o: SearchOrg) => (await ApiKey.findOne({ where: { orgId: o.org.id } }))!.id;

/** One raw tools/call POST; its single JSON-RPC answer. */
async function callOnce(key: string, id: unknown, query: string): Promise<CallToolResult> {
  const r = await mcpPost(key, toolCall(id, 'web_search', { query }));
  expect(r.status).to.equal(200);
  return ((await r.json()) as { result: CallToolResult }).result;
}
const errorCode = (r: CallToolResult) => (r.isError ? JSON.parse((r.content[0] as { text: string }).text).error.code : undefined);

/**
 * A `notifications/cancelled` that arrives before its call started (here on a second pod, the call
 * then on the first) is kept a short while, per key: the call, when it starts, is cancelled at once.
 */
describe('MCP cancellation that arrives before its call', function () {
  this.timeout(30_000);
  let second: TestGateway;
  before(async () => {
    second = await startGateway('test-pod-mcp-cancel-early');
  });
  after(async () => second?.close());
  beforeEach(resetSim);

  it('is kept: the call starting after it is cancelled at once, never sent upstream, nothing billed; the cancel is used up', async () => {
    const o = await searchOrg();
    expect((await mcpPost(o.key, cancelMsg('early-1'), second.url)).status).to.equal(202);
    const r = await callOnce(o.key, 'early-1', 'too late');
    expect(errorCode(r), JSON.stringify(r)).to.equal('client_closed_request');
    expect(upstream('too late'), 'never sent upstream').to.equal(undefined);
    expect(await leasesFreed(env().gw.ctx.leases, o.org.id, 'search', 'default'), 'search lane lease back to zero').to.equal(true);
    expect(await ledger(o.org.id)).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'nothing billed').to.equal(0);
    // used up: the next call under that id runs
    const again = await callOnce(o.key, 'early-1', 'second time');
    expect(again.isError ?? false, JSON.stringify(again)).to.equal(false);
    expect(await ledger(o.org.id)).to.have.length(1);
  });

  it("is the key's own: another key's early cancel of the same id, or of the same id typed differently, cancels nothing", async () => {
    const o = await searchOrg();
    const other = await searchOrg();
    await mcpPost(other.key, cancelMsg(7), second.url);
    await mcpPost(o.key, cancelMsg('7'), second.url);
    const r = await callOnce(o.key, 7, 'mine');
    expect(r.isError ?? false, JSON.stringify(r)).to.equal(false);
    expect(upstream('mine')).to.not.equal(undefined);
  });

  it('a cancel that found its call in flight on another pod is not kept for a later call reusing the id', async () => {
    const o = await searchOrg();
    const kept = keys.mcpKeptCancels(await keyIdOf(o));
    env().sim.knobs.set('*', { hold: true });
    try {
      const sent = callOnce(o.key, 'f', 'in flight');
      expect(await waitFor(() => !!upstream('in flight'), 5000), 'the search is upstream').to.equal(true);
      expect((await mcpPost(o.key, cancelMsg('f'), second.url)).status).to.equal(202);
      expect(errorCode(await sent)).to.equal('client_closed_request');
      expect(await waitFor(async () => (await env().redis.zscore(kept, memberOf(JSON.stringify('f')))) === null, 3000), 'the pod that aborted it dropped the kept cancel').to.equal(true);
    } finally {
      env().sim.knobs.reset();
    }
    const r = await callOnce(o.key, 'f', 'reused id');
    expect(r.isError ?? false, JSON.stringify(r)).to.equal(false);
  });

  it('is bounded: kept at most KEEP_MS, at most MAX_KEPT_PER_KEY per key (the oldest go), and an expired one cancels nothing', async () => {
    const o = await searchOrg();
    const kept = keys.mcpKeptCancels(await keyIdOf(o));
    for (let p = 0; p < 3; p++) {
      const batch = Array.from({ length: 32 }, (_, i) => cancelMsg(`b${p}-${i}`));
      expect((await mcpPost(o.key, batch, second.url)).status).to.equal(202);
    }
    const redis = env().redis;
    expect(await redis.zcard(kept)).to.equal(MAX_KEPT_PER_KEY);
    const pttl = await redis.pttl(kept);
    expect(pttl).to.be.greaterThan(0).and.at.most(KEEP_MS);
    expect(await redis.zscore(kept, memberOf(JSON.stringify('b0-0'))), 'the oldest went first').to.equal(null);
    expect(await redis.zscore(kept, memberOf(JSON.stringify('b2-31')))).to.not.equal(null);
    expect((await callOnce(o.key, 'b0-0', 'evicted')).isError ?? false, 'an evicted cancel cancels nothing').to.equal(false);
    // expired (its score in the past, as KEEP_MS later): cancels nothing
    await redis.zadd(kept, Date.now() - 1000, memberOf(JSON.stringify('b2-31')));
    expect((await callOnce(o.key, 'b2-31', 'expired')).isError ?? false, 'an expired cancel cancels nothing').to.equal(false);
    expect(errorCode(await callOnce(o.key, 'b2-30', 'kept')), 'a kept one still cancels').to.equal('client_closed_request');
  });
});
