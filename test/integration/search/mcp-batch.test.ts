import { expect } from 'chai';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { env, resetSim } from '../../helpers/harness';
import { leasesFreed } from '../../helpers/leases';
import { usageSettled } from '../../helpers/usage';
import { Image, UsageEvent } from '../../../shared/db/models';
import { keys } from '../../../shared/redis/keys';
import { periodOf } from '../../../shared/search/period';
import { waitFor } from '../../helpers/wait';
import { runSearch } from '../../../api/dispatch/search';
import { ledger, mcpPost, searchOrg, toolCall } from './helpers';

type Reply = { id: unknown; result?: CallToolResult & { tools?: unknown[] }; error?: { code: number } };

/**
 * Tool calls of one MCP request (a JSON-RPC batch) whose ids repeat, or differ only in characters a
 * job id cannot hold: each call is its own job and its own answer, and every lane lease and search
 * reservation is given back.
 */
describe('MCP batches with repeated JSON-RPC ids', () => {
  beforeEach(resetSim);

  it('every call is answered as its own job, promptly; lane leases back to zero; the search counter equals the ledger', async () => {
    const o = await searchOrg();
    const search = (id: unknown, q: string) => toolCall(id, 'web_search', { query: q });
    const image = (id: unknown, p: string) => toolCall(id, 'generate_image', { prompt: p, size: '256x256' });
    const batch = [search(1, 'q1'), search(1, 'q2'), search('a/b', 'q3'), search('a_b', 'q4'), image(1, 'p1'), image('a/b', 'p2'), image('a_b', 'p3'), { jsonrpc: '2.0', id: 1, method: 'tools/list' }];
    const t = Date.now();
    const r = await mcpPost(o.key, batch);
    expect(r.status).to.equal(200);
    const replies = (await r.json()) as Reply[];
    expect(Date.now() - t, 'answered promptly, not at a deadline').to.be.below(10_000);
    expect(replies.map((x) => String(x.id)).sort(), 'one answer per request, under its own id').to.deep.equal(batch.map((m) => String(m.id)).sort());
    for (const x of replies) expect(x.result?.isError ?? false, JSON.stringify(x)).to.equal(false);

    const structured = replies.map((x) => x.result?.structuredContent as { query?: string; images?: Array<{ id: string }> } | undefined);
    expect(structured.flatMap((s) => (s?.query ? [s.query] : [])).sort(), 'each search answered with its own result').to.deep.equal(['q1', 'q2', 'q3', 'q4']);
    const imageIds = structured.flatMap((s) => s?.images?.map((i) => i.id) ?? []);
    expect(new Set(imageIds).size).to.equal(3);
    expect(await Image.count({ where: { id: imageIds, orgId: o.org.id } })).to.equal(3);
    expect(replies.filter((x) => Array.isArray(x.result?.tools))).to.have.length(1);

    const leases = env().gw.ctx.leases;
    expect(await leasesFreed(leases, o.org.id, 'search', 'default'), 'search lane leases back to zero').to.equal(true);
    expect(await leasesFreed(leases, o.org.id, 'images', 'interactive'), 'image lane leases back to zero').to.equal(true);
    const rows = await ledger(o.org.id);
    expect(rows).to.have.length(4);
    expect(new Set(rows.map((x) => x.requestId)).size, 'four ledger rows, four request ids').to.equal(4);
    const counted = Number(await env().redis.get(keys.searchCount(o.org.id, periodOf(), 'all')));
    expect(counted, 'reserved = recorded: no reservation left behind').to.equal(4);
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { orgId: o.org.id, modality: 'image' } });
    expect(new Set(events.map((e) => e.requestId)).size, 'three image jobs, three usage events').to.equal(3);
  });

  it('a cancellation in the batch naming a number aborts no other request of it: every request answered, promptly, and billed as delivered', async () => {
    const o = await searchOrg();
    // the SDK sees each request under its position: a cancel of 1, 2 or 3 named the image, the ping and the search
    const cancel = (requestId: number) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'x' } });
    const batch = [toolCall('s', 'web_search', { query: 'kept' }), toolCall('i', 'generate_image', { prompt: 'p', size: '256x256' }), { jsonrpc: '2.0', id: 'p', method: 'ping' }, toolCall('t', 'web_search', { query: 'kept too' }), cancel(1), cancel(2), cancel(3)];
    const r = await mcpPost(o.key, batch, env().gw.url, 8000);
    expect(r.status).to.equal(200);
    const replies = (await r.json()) as Reply[];
    expect(replies.map((x) => String(x.id)).sort(), 'no answer withheld').to.deep.equal(['i', 'p', 's', 't']);
    for (const x of replies) expect(x.result?.isError ?? false, JSON.stringify(x)).to.equal(false);
    const leases = env().gw.ctx.leases;
    expect(await leasesFreed(leases, o.org.id, 'search', 'default')).to.equal(true);
    expect(await leasesFreed(leases, o.org.id, 'images', 'interactive')).to.equal(true);
    expect(await ledger(o.org.id), 'the two searches delivered and billed').to.have.length(2);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id, modality: 'image' } }), 'the image delivered and billed').to.equal(1);
  });

  it('a job id the pod already awaits is refused at once, never taken over: the first call is answered, every lease freed', async () => {
    const o = await searchOrg();
    const ctx = env().gw.ctx;
    const caller = { ctx, orgId: o.org.id, org: (await ctx.directory.org(o.org.id))!, apiKeyId: o.keyId, userId: null, projectId: o.project.id, requestId: `req_same_${Date.now()}` };
    env().sim.knobs.set('*', { hold: true });
    const first = runSearch(caller, { kind: 'search', query: 'first' }).then(
      (r) => ({ ok: true as const, r }),
      (err: Error) => ({ ok: false as const, err }),
    );
    expect(await waitFor(() => env().sim.log.entries.length === 1, 5000), 'the first job is upstream').to.equal(true);
    const secondClient = new AbortController();
    const second = await runSearch(caller, { kind: 'search', query: 'second' }, secondClient.signal).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(second?.message, 'the second call with the same job id is refused').to.match(/already awaited/);
    secondClient.abort(); // the refused call's client leaving touches nothing of the first's
    env().sim.knobs.release();
    let outcome: Awaited<typeof first> | undefined;
    first.then((x) => (outcome = x));
    expect(await waitFor(() => outcome !== undefined, 10_000), 'the first call is answered').to.equal(true);
    expect(outcome!.ok, String(!outcome!.ok && outcome!.err)).to.equal(true);
    expect(await leasesFreed(ctx.leases, o.org.id, 'search', 'default'), 'search lane leases back to zero').to.equal(true);
    expect(await ledger(o.org.id)).to.have.length(1);
    expect(Number(await env().redis.get(keys.searchCount(o.org.id, periodOf(), 'all'))), "the refused call's reservation given back").to.equal(1);
  });

  it('a client that leaves mid-batch: every call is cancelled, leases and reservations given back, nothing billed', async () => {
    const o = await searchOrg();
    env().sim.knobs.set('*', { hold: true });
    const client = new AbortController();
    const batch = [toolCall(1, 'web_search', { query: 'q1' }), toolCall(1, 'web_search', { query: 'q2' }), toolCall(1, 'generate_image', { prompt: 'p', size: '256x256' })];
    const sent = fetch(`${env().gw.url}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${o.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(batch),
      signal: client.signal,
    }).catch((err: Error) => err);
    expect(await waitFor(() => env().sim.log.entries.length === 3, 5000), 'all three jobs are upstream').to.equal(true);
    client.abort();
    expect(await sent).to.be.instanceOf(Error);
    const leases = env().gw.ctx.leases;
    expect(await leasesFreed(leases, o.org.id, 'search', 'default'), 'search lane leases back to zero').to.equal(true);
    expect(await leasesFreed(leases, o.org.id, 'images', 'interactive'), 'image lane lease back to zero').to.equal(true);
    expect(await waitFor(async () => Number(await env().redis.get(keys.searchCount(o.org.id, periodOf(), 'all'))) === 0, 3000), 'search reservations given back').to.equal(true);
    expect(await waitFor(() => env().sim.log.entries.every((e) => e.aborted), 3000), 'the upstream calls were aborted').to.equal(true);
    env().sim.knobs.release();
    expect(await ledger(o.org.id)).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'nothing billed').to.equal(0);
  });
});
