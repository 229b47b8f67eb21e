import { expect } from 'chai';
import http from 'http';
import type { AddressInfo } from 'net';
import { AbortRelay, JobAbortController, abortSourceOf } from '../../../shared/queues/abort-relay';
import { fetchUpstream } from '../../../workers/providers/http';

describe('a job\'s abort relayed to undici without an EventTarget listener', () => {
  it('a job controller\'s abort fires its relay once, with the signal\'s reason', () => {
    const c = new JobAbortController();
    const relay = abortSourceOf(c.signal) as AbortRelay;
    expect(relay).to.be.instanceOf(AbortRelay);
    const heard: unknown[] = [];
    const gone = () => heard.push('removed listener');
    relay.once('abort', () => heard.push(relay.reason));
    relay.on('abort', gone);
    relay.removeListener('abort', gone);
    const reason = new Error('cancelled by client');
    c.abort(reason);
    c.abort(new Error('second'));
    expect(c.signal.aborted).to.equal(true);
    expect(relay.aborted).to.equal(true);
    expect(heard).to.deep.equal([reason]);
    expect(relay.listenerCount).to.equal(0);
  });

  it('a signal that is not a job\'s goes to undici as it is', () => {
    const plain = new AbortController().signal;
    expect(abortSourceOf(plain)).to.equal(plain);
  });

  describe('through a real upstream call', () => {
    let server: http.Server;
    let url: string;
    const closed: string[] = [];
    before(async () => {
      server = http.createServer((req, res) => {
        req.on('close', () => closed.push(req.url ?? ''));
        if (req.url === '/hang') return; // never answers
        res.setHeader('content-type', 'application/json');
        res.end('{"ok":true}');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => new Promise<void>((r) => server.close(() => r())));

    it('an abort before the answer ends the call at once with the abort\'s reason, and the connection', async () => {
      const c = new JobAbortController();
      const call = fetchUpstream(`${url}/hang`, { method: 'POST', body: '{}' }, { signal: c.signal, deadline: Date.now() + 30_000 });
      await new Promise((r) => setTimeout(r, 100));
      expect((abortSourceOf(c.signal) as AbortRelay).listenerCount, 'undici listens on the relay').to.equal(1);
      const reason = new Error('the deadline');
      const t = Date.now();
      c.abort(reason);
      const err = await call.then(() => undefined, (e: unknown) => e);
      expect(err).to.equal(reason);
      expect(Date.now() - t).to.be.below(1000);
      await new Promise((r) => setTimeout(r, 100));
      expect(closed, 'the upstream saw the connection go').to.include('/hang');
    });

    it('a call that completes leaves no listener on the relay', async () => {
      const c = new JobAbortController();
      const res = await fetchUpstream(`${url}/ok`, { method: 'POST', body: '{}' }, { signal: c.signal, deadline: Date.now() + 30_000 });
      expect(await res.json()).to.deep.equal({ ok: true });
      await new Promise((r) => setImmediate(r));
      expect((abortSourceOf(c.signal) as AbortRelay).listenerCount).to.equal(0);
    });
  });
});
