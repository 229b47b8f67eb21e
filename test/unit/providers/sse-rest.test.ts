import http from 'http';
import type { AddressInfo, Socket } from 'net';
import { expect } from 'chai';
import { Agent, request } from 'undici';
import { readSse, readSseBatches } from '../../../workers/providers/sse';

/**
 * What readSse does with an upstream body after its terminating event: reads the rest (normally
 * just the end) so the connection is kept for the next request, and cuts a body that goes on.
 */
describe('readSse after the terminating event', () => {
  let server: http.Server;
  let url: string;
  /** The server's side of each connection made in the current test, and whether it closed. */
  let sockets: Array<{ closed: boolean }>;
  const closed = () => sockets.filter((s) => s.closed).length;
  /** ms the server waits after `[DONE]` before it ends the body; -1: never ends it. */
  let endAfterMs: number;
  before(async () => {
    server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"n":1}\n\n');
      res.write('data: [DONE]\n\n');
      if (endAfterMs >= 0) setTimeout(() => res.end(), endAfterMs);
    });
    server.on('connection', (s: Socket) => {
      const seen = { closed: false };
      sockets.push(seen);
      s.on('close', () => (seen.closed = true));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(() => new Promise((r) => server.close(r)));
  beforeEach(() => {
    sockets = [];
  });

  /** One streamed request read the way the providers read it (they stop at `[DONE]`). */
  async function stream(agent: Agent): Promise<{ events: string[]; body: { errored?: unknown; readableEnded: boolean } }> {
    const r = await request(url, { method: 'POST', dispatcher: agent, body: '{}' });
    const events: string[] = [];
    for await (const e of readSse(r.body, (ev) => ev.data === '[DONE]')) {
      events.push(e.data);
      if (e.data === '[DONE]') break;
    }
    return { events, body: r.body as unknown as { errored?: unknown; readableEnded: boolean } };
  }

  it('reads the body to its end, so the next request reuses the connection', async () => {
    endAfterMs = 30; // the end arrives after the reader has stopped
    const agent = new Agent({ keepAliveTimeout: 10_000 });
    try {
      for (let i = 0; i < 3; i++) {
        const { events, body } = await stream(agent);
        expect(events).to.deep.equal(['{"n":1}', '[DONE]']);
        await new Promise((r) => setTimeout(r, 60));
        expect(body.readableEnded, 'the body was read to its end').to.equal(true);
        expect(body.errored ?? null, 'the body was not destroyed').to.equal(null);
      }
      expect(sockets).to.have.length(1);
      expect(closed()).to.equal(0);
    } finally {
      await agent.close();
    }
  });

  it('returns at once and cuts a body that never ends after its terminating event', async () => {
    endAfterMs = -1;
    const agent = new Agent({ keepAliveTimeout: 10_000 });
    try {
      const t0 = Date.now();
      const { events } = await stream(agent);
      expect(events.at(-1)).to.equal('[DONE]');
      expect(Date.now() - t0, 'the reader does not wait for the end').to.be.below(500);
      const deadline = Date.now() + 3000;
      while (!sockets[0].closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(sockets[0].closed, 'the connection was closed about a second later').to.equal(true);
    } finally {
      await agent.destroy();
    }
  });
});

/** readSseBatches: the events of one read of the body come together, up to the terminating event. */
describe('readSseBatches', () => {
  let server: http.Server;
  let url: string;
  before(async () => {
    server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (req.url === '/one-write') {
        // every event in one write; one after the terminating event is not the stream's
        res.end('data: {"n":1}\n\ndata: {"n":2}\n\ndata: {"n":3}\n\ndata: [DONE]\n\ndata: {"after":true}\n\n');
        return;
      }
      res.write('data: {"n":1}\n\ndata: {"n":2}\n\n');
      setTimeout(() => res.end('data: {"n":3}\n\ndata: [DONE]\n\n'), 50);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((r) => server.close(r)));

  async function batches(path: string): Promise<string[][]> {
    const r = await request(`${url}${path}`, { method: 'POST', body: '{}' });
    const out: string[][] = [];
    for await (const b of readSseBatches(r.body, (ev) => ev.data === '[DONE]')) out.push(b.map((e) => e.data));
    return out;
  }

  it('one write: one batch, ending at the terminating event', async () => {
    expect(await batches('/one-write')).to.deep.equal([['{"n":1}', '{"n":2}', '{"n":3}', '[DONE]']]);
  });

  it('two writes apart: a batch each', async () => {
    expect(await batches('/two-writes')).to.deep.equal([['{"n":1}', '{"n":2}'], ['{"n":3}', '[DONE]']]);
  });

  it('readSse yields the same events one by one', async () => {
    const r = await request(`${url}/one-write`, { method: 'POST', body: '{}' });
    const events: string[] = [];
    for await (const e of readSse(r.body, (ev) => ev.data === '[DONE]')) events.push(e.data);
    expect(events).to.deep.equal(['{"n":1}', '{"n":2}', '{"n":3}', '[DONE]']);
  });
});
