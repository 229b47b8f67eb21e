import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION, type CallToolResult, type JSONRPCMessage, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { env, resetSim } from '../../helpers/harness';
import { withSettings } from '../../helpers/settings';
import { Image } from '../../../shared/db/models';
import { searchOrg, mcpPost } from './helpers';

/**
 * Progress notifications on the hosted MCP server (MCP basic/utilities/progress; the Streamable HTTP
 * transport's SSE answer to a POST): a tools/call with `_meta.progressToken` that runs past
 * MCP_PROGRESS_INTERVAL_MS is answered as an SSE stream of `notifications/progress`, then the result.
 * The image upstream is held (the simulator's `hold` knob) until the test lets it answer.
 */

const INTERVAL_MS = 200;

/** Resolves once `check` holds (polled), or fails after `ms`. */
async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const imageRequests = () => env().sim.log.entries.filter((e) => e.path.endsWith('/images/generations')).length;

/** The SSE events of a text/event-stream body: each event's `data` parsed. */
function sseData(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      expect(lines.filter((l) => l.startsWith('id:')), 'no event ids: the stream is not resumable').to.have.length(0);
      return JSON.parse(lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n')) as Record<string, unknown>;
    });
}

describe('MCP progress notifications (SSE answer while a tool call runs)', function () {
  this.timeout(30_000);
  beforeEach(resetSim);
  afterEach(() => env().sim.knobs.release());

  it('the official client gets progress while generate_image runs past its own request timeout (resetTimeoutOnProgress), then the right result', async () => {
    const o = await searchOrg();
    await withSettings({ MCP_PROGRESS_INTERVAL_MS: String(INTERVAL_MS) }, async () => {
      env().sim.knobs.set('sim-image-1', { hold: true });
      const client = new Client({ name: 'progress-client', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${env().gw.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${o.key}` } } }));
      try {
        const seen: Progress[] = [];
        const started = Date.now();
        // a timeout of 2 s, which the held call outlives twice: only the progress notifications keep it alive
        const call = client.callTool({ name: 'generate_image', arguments: { prompt: 'a slow square', size: '256x256' } }, undefined, {
          timeout: 2000,
          resetTimeoutOnProgress: true,
          onprogress: (p) => seen.push(p),
        });
        let failed: unknown;
        call.catch((err: unknown) => (failed = err ?? new Error('rejected')));
        await until(() => failed !== undefined || (Date.now() - started > 4500 && seen.length >= 5), 20_000, 'progress past the request timeout');
        if (failed) throw failed as Error; // without progress: the client's RequestTimeout (-32001) after 2 s
        env().sim.knobs.release();
        const r = (await call) as CallToolResult;
        expect(r.isError ?? false, JSON.stringify(r)).to.equal(false);
        const s = r.structuredContent as { model: string; images: Array<{ id: string; url: string }> };
        expect(s.model).to.equal('sim-image');
        expect(s.images).to.have.length(1);
        expect(await Image.count({ where: { id: s.images[0].id, orgId: o.org.id } })).to.equal(1);
        expect(r.content.map((c) => c.type), 'the negotiated version (latest) has resource links').to.deep.equal(['text', 'resource_link']);
        // "The progress value MUST increase with each notification, even if the total is unknown"
        for (let i = 1; i < seen.length; i++) expect(seen[i].progress, JSON.stringify(seen)).to.be.greaterThan(seen[i - 1].progress);
        expect(seen[0].total).to.equal(undefined);
        expect(seen[0].message).to.match(/^generate_image: working, /);
        expect(imageRequests(), 'one upstream call').to.equal(1);
      } finally {
        await client.close();
      }
    });
  });

  it('on the wire: text/event-stream with notifications/progress naming the token, then the response; without a progressToken the answer is JSON as before', async () => {
    const o = await searchOrg();
    const call = (id: number, meta?: Record<string, unknown>) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'generate_image', arguments: { prompt: `wire ${id}`, size: '256x256' }, ...(meta ? { _meta: meta } : {}) },
    });
    await withSettings({ MCP_PROGRESS_INTERVAL_MS: String(INTERVAL_MS) }, async () => {
      // with a token: the stream
      env().sim.knobs.set('sim-image-1', { hold: true });
      const streamed = mcpPost(o.key, call(1, { progressToken: 'tok-1' }), undefined, 20_000, LATEST_PROTOCOL_VERSION);
      await until(() => imageRequests() === 1, 10_000, 'the held image request');
      const r = await streamed; // the headers come with the first notification, while the call is held
      expect(r.status).to.equal(200);
      expect(r.headers.get('content-type')).to.match(/^text\/event-stream/);
      await new Promise((res) => setTimeout(res, 3 * INTERVAL_MS));
      env().sim.knobs.release();
      const events = sseData(await r.text());
      const notes = events.slice(0, -1);
      expect(notes.length, JSON.stringify(events)).to.be.greaterThanOrEqual(1);
      const values = notes.map((n) => (n.params as { progress: number }).progress);
      expect(values, 'strictly increasing').to.deep.equal([...values].sort((a, b) => a - b).filter((v, i, a) => i === 0 || v > a[i - 1]));
      for (const n of notes) {
        expect(n.method).to.equal('notifications/progress');
        expect((n.params as { progressToken: unknown }).progressToken).to.equal('tok-1');
        expect(n).not.to.have.property('id');
      }
      const last = events[events.length - 1] as { id: number; result: CallToolResult };
      expect(last.id).to.equal(1);
      expect(last.result.isError ?? false, JSON.stringify(last)).to.equal(false);
      expect((last.result.structuredContent as { images: unknown[] }).images).to.have.length(1);

      // without a token, held as long: one JSON object, no notifications
      resetSim();
      env().sim.knobs.set('sim-image-1', { hold: true });
      const plain = mcpPost(o.key, call(2), undefined, 20_000, LATEST_PROTOCOL_VERSION);
      await until(() => imageRequests() === 1, 10_000, 'the held image request');
      await new Promise((res) => setTimeout(res, 4 * INTERVAL_MS));
      env().sim.knobs.release();
      const p = await plain;
      expect(p.status).to.equal(200);
      expect(p.headers.get('content-type')).to.match(/^application\/json/);
      const reply = (await p.json()) as { jsonrpc: string; id: number; result: CallToolResult };
      expect([reply.jsonrpc, reply.id]).to.deep.equal(['2.0', 2]);
      expect(reply.result.isError ?? false, JSON.stringify(reply)).to.equal(false);
      expect((reply.result.structuredContent as { images: unknown[] }).images).to.have.length(1);

      // a token on a call that ends before the first interval: JSON too (the stream starts only with a notification)
      resetSim(); // no hold
      await withSettings({ MCP_PROGRESS_INTERVAL_MS: '30000' }, async () => {
        const quick = await mcpPost(o.key, call(3, { progressToken: 7 }), undefined, 20_000, LATEST_PROTOCOL_VERSION);
        expect(quick.headers.get('content-type')).to.match(/^application\/json/);
        expect(((await quick.json()) as { id: number }).id).to.equal(3);
      });
    });
  });

  it('a batch (2025-03-26) with a progressToken on one call: the stream carries its notifications, then each response of the batch as its own event, under the caller ids', async () => {
    const o = await searchOrg();
    await withSettings({ MCP_PROGRESS_INTERVAL_MS: String(INTERVAL_MS) }, async () => {
      env().sim.knobs.set('sim-image-1', { hold: true });
      const batch = [
        { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'generate_image', arguments: { prompt: 'batch a', size: '256x256' }, _meta: { progressToken: 'pa' } } },
        { jsonrpc: '2.0', id: 'a', method: 'tools/list' },
      ];
      const res = mcpPost(o.key, batch);
      await until(() => imageRequests() === 1, 10_000, 'the held image request');
      const r = await res;
      expect(r.headers.get('content-type')).to.match(/^text\/event-stream/);
      await new Promise((done) => setTimeout(done, 2 * INTERVAL_MS));
      env().sim.knobs.release();
      const events = sseData(await r.text());
      expect(events.slice(0, -2).every((e) => e.method === 'notifications/progress' && (e.params as { progressToken: string }).progressToken === 'pa')).to.equal(true);
      // one event per response, in the batch's order (each SSE event is one JSON-RPC message to the official clients)
      const answer = events.slice(-2) as unknown as Array<{ id: string; result: Record<string, unknown> }>;
      expect(answer.map((x) => x.id)).to.deep.equal(['a', 'a']);
      expect(answer[0].result.structuredContent, 'the call, under the repeated id').to.be.an('object');
      expect(answer[1].result.tools).to.be.an('array');
    });
  });
  it("the official client's transport sending a batch (2025-03-26) reads every response of the streamed answer (one SSE event per message)", async () => {
    const o = await searchOrg();
    await withSettings({ MCP_PROGRESS_INTERVAL_MS: String(INTERVAL_MS) }, async () => {
      env().sim.knobs.set('sim-image-1', { hold: true });
      const transport = new StreamableHTTPClientTransport(new URL(`${env().gw.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${o.key}` } } });
      const got: JSONRPCMessage[] = [];
      const failures: unknown[] = [];
      transport.onmessage = (m) => void got.push(m);
      transport.onerror = (e) => void failures.push(e);
      await transport.start();
      transport.setProtocolVersion('2025-03-26'); // the version with batches
      try {
        const sent = transport.send([
          { jsonrpc: '2.0', id: 'img', method: 'tools/call', params: { name: 'generate_image', arguments: { prompt: 'sdk batch', size: '256x256' }, _meta: { progressToken: 'sdk-1' } } },
          { jsonrpc: '2.0', id: 'list', method: 'tools/list' },
        ]);
        await until(() => imageRequests() === 1, 10_000, 'the held image request');
        await sent; // answered with the stream's headers, at the first notification
        await until(() => got.some((m) => 'method' in m && m.method === 'notifications/progress'), 10_000, 'a progress notification');
        env().sim.knobs.release();
        const responses = () => got.filter((m) => 'id' in m && !('method' in m)) as Array<{ id: string; result?: Record<string, unknown> }>;
        await until(() => responses().length === 2 || failures.length > 0, 10_000, 'the responses (or a client error)');
        expect(failures.map(String), 'the client read every event').to.deep.equal([]);
        expect(responses().map((m) => m.id)).to.deep.equal(['img', 'list']);
        expect((responses()[0].result!.structuredContent as { images: unknown[] }).images).to.have.length(1);
        expect(responses()[1].result!.tools).to.be.an('array');
      } finally {
        await transport.close();
      }
    });
  });
});
