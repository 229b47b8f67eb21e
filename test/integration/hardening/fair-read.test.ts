import http from 'http';
import type { AddressInfo } from 'net';
import type { Request, Response } from 'express';
import { expect } from 'chai';
import { FairRead } from '../../../api/fair-read';
import { waitFor } from '../../helpers/wait';
import { lagLoop } from '../../helpers/busy-loop';

/**
 * api/fair-read.ts over real sockets: a plain HTTP server whose handler admits each request under the
 * organization its `x-org` header names and holds it until the test releases it; the event loop is
 * kept behind by a busy interval, as a flood keeps a web pod behind.
 */
describe('fair reading under overload: an over-share organization\'s connections are not read while the pod lags', function () {
  this.timeout(20_000);
  let server: http.Server;
  let fair: FairRead;
  let base: string;
  const held = new Map<string, http.ServerResponse>();
  const received: string[] = [];
  let stopLag: (() => void) | undefined;
  const agents: http.Agent[] = [];

  const calm = () => stopLag?.();

  /** A request of `org` tagged `id` over `agent`; resolves when answered. */
  const send = (agent: http.Agent, org: string, id: string) =>
    new Promise<number>((resolve, reject) => {
      const req = http.request(`${base}/`, { agent, headers: { 'x-org': org, 'x-id': id } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
  const release = (id: string) => {
    held.get(id)!.end('ok');
    held.delete(id);
  };
  const agent = () => {
    const a = new http.Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(a);
    return a;
  };

  /** Four flooding connections (or `flood`) and one quiet one, each holding one open request. */
  const openFloodAndQuiet = async (flood = Array.from({ length: 4 }, agent)) => {
    const quiet = agent();
    const answered = [...flood.map((a, i) => send(a, 'flood', `f${i}`)), send(quiet, 'quiet', 'q0')];
    expect(await waitFor(() => held.size === 5, 5_000, 5)).to.equal(true);
    return { flood, quiet, answered };
  };
  /** Keeps the loop 30 ms behind until fair reading sees it lagging. */
  const lagUntilSeen = async () => {
    stopLag = lagLoop(30);
    expect(await waitFor(() => fair.lagging, 2_000, 1)).to.equal(true);
  };

  beforeEach(async () => {
    fair = new FairRead({ lagMs: 10, maxPauseMs: 10_000, minOpen: 2, tickMs: 5 });
    fair.start();
    server = http.createServer((req, res) => {
      const id = String(req.headers['x-id']);
      received.push(id);
      fair.admit(req as Request, res as Response, String(req.headers['x-org']));
      held.set(id, res);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    calm();
    fair.stop();
    for (const res of held.values()) res.end();
    held.clear();
    received.length = 0;
    agents.splice(0).forEach((a) => a.destroy());
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('pauses the flooding org\'s connection after its response while the loop lags, never the quiet org\'s; reads it again once the loop catches up', async () => {
    const { flood, quiet, answered } = await openFloodAndQuiet();
    expect(fair.openCounts().get('flood')).to.equal(4);

    await lagUntilSeen();
    release('f0');
    release('q0');
    await Promise.all([answered[0], answered[4]]);
    // each client sends its next request on the same connection at once
    const nextFlood = send(flood[0], 'flood', 'f0-next');
    const nextQuiet = send(quiet, 'quiet', 'q1');
    expect(await waitFor(() => received.includes('q1'), 5_000, 5), 'the quiet org is read while the pod lags').to.equal(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(received, 'the flooding org\'s next request is not read while the pod lags').to.not.include('f0-next');
    expect(fair.pausedCount()).to.equal(1);

    calm();
    expect(await waitFor(() => received.includes('f0-next'), 5_000, 5), 'read once the loop caught up').to.equal(true);
    expect(fair.pausedCount()).to.equal(0);
    release('f0-next');
    release('q1');
    expect(await nextFlood).to.equal(200);
    expect(await nextQuiet).to.equal(200);
  });

  it('an organization alone on the pod is never paused, however far behind the loop is', async () => {
    const flood = Array.from({ length: 4 }, agent);
    const answered = flood.map((a, i) => send(a, 'solo', `s${i}`));
    expect(await waitFor(() => held.size === 4, 5_000, 5)).to.equal(true);
    stopLag = lagLoop(30);
    await new Promise((r) => setTimeout(r, 200));
    expect(fair.sampling, 'one organization: the loop is not even sampled').to.equal(false);
    release('s0');
    await answered[0];
    const next = send(flood[0], 'solo', 's0-next');
    expect(await waitFor(() => received.includes('s0-next'), 5_000, 5)).to.equal(true);
    expect(fair.pausedCount()).to.equal(0);
    calm();
    release('s0-next');
    expect(await next).to.equal(200);
  });

  it('a connection that carried requests of two organizations (a proxy\'s pooled connection) is never paused', async () => {
    const flood = Array.from({ length: 4 }, agent);
    // flood[0]'s connection first carries a quiet-org request, then the flood's
    const first = send(flood[0], 'quiet', 'mixed-q');
    expect(await waitFor(() => held.has('mixed-q'), 5_000, 5)).to.equal(true);
    release('mixed-q');
    await first;
    const { answered } = await openFloodAndQuiet(flood);
    await lagUntilSeen();
    release('f0');
    await answered[0];
    const next = send(flood[0], 'flood', 'f0-next');
    expect(await waitFor(() => received.includes('f0-next'), 5_000, 5), 'the mixed connection is read while the pod lags').to.equal(true);
    expect(fair.pausedCount()).to.equal(0);
    // the same org's other connections, which carried only its requests, are paused
    release('f1');
    await answered[1];
    const next1 = send(flood[1], 'flood', 'f1-next');
    expect(await waitFor(() => fair.pausedCount() === 1, 2_000, 5)).to.equal(true);
    calm();
    expect(await waitFor(() => received.includes('f1-next'), 5_000, 5)).to.equal(true);
    release('f0-next');
    release('f1-next');
    expect([await next, await next1]).to.deep.equal([200, 200]);
  });

  it('a paused connection is read again after maxPauseMs even if the loop stays behind', async () => {
    fair.stop();
    fair = new FairRead({ lagMs: 10, maxPauseMs: 400, minOpen: 2, tickMs: 5 });
    fair.start();
    const { flood, answered } = await openFloodAndQuiet();
    await lagUntilSeen();
    release('f0');
    await answered[0];
    const next = send(flood[0], 'flood', 'f0-next');
    await new Promise((r) => setTimeout(r, 150));
    expect(received).to.not.include('f0-next');
    expect(await waitFor(() => received.includes('f0-next'), 5_000, 5), 'read again within the bound while still lagging').to.equal(true);
    expect(fair.lagging).to.equal(true);
    calm();
    release('f0-next');
    expect(await next).to.equal(200);
  });
});
