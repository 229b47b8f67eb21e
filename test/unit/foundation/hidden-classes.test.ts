import { expect } from 'chai';
import http from 'http';
import { execFileSync } from 'child_process';
import v8 from 'v8';
import express from 'express';
import type { AddressInfo } from 'net';
import { expressClasses } from '../../../shared/http/express-classes';

// V8's own checks of two objects' hidden classes, compiled after the flag is set
v8.setFlagsFromString('--allow-natives-syntax');
const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
const fast = new Function('o', 'return %HasFastProperties(o)') as (o: object) => boolean;

/** The req and res of `n` JSON posts through an express app shaped like the gateway's (body parser, properties added by middleware). */
async function requestsThrough(withClasses: boolean, n: number): Promise<Array<{ req: express.Request; res: express.Response }>> {
  const app = express();
  const seen: Array<{ req: express.Request; res: express.Response }> = [];
  app.use(express.json());
  app.use((req, res, next) => {
    (req as unknown as { auth: object }).auth = { orgId: 'o' };
    res.locals.requestLog = { receivedAt: Date.now() };
    const writeHead = res.writeHead;
    res.writeHead = function (this: express.Response, ...args: unknown[]) {
      return (writeHead as (...a: unknown[]) => express.Response).apply(this, args);
    } as typeof res.writeHead;
    next();
  });
  app.post('/x', (req, res) => {
    seen.push({ req, res });
    res.set('x-request-id', 'r').status(200).json({ ok: req.body.n });
  });
  const server = withClasses ? http.createServer(expressClasses(app), app) : http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  try {
    for (let i = 0; i < n; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/x`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n: i }) });
      expect(await res.json()).to.deep.equal({ ok: i });
    }
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  return seen;
}

describe('hidden classes on the request path (shared/http/express-classes.ts, shared/merged.ts)', () => {
  it('requests of a server built with expressClasses share their req and res maps, with fast properties and the app prototypes', async () => {
    const [, a, b] = await requestsThrough(true, 3);
    expect(sameMap(a.req, b.req), 'req').to.equal(true);
    expect(sameMap(a.res, b.res), 'res').to.equal(true);
    expect(fast(b.req) && fast(b.res)).to.equal(true);
    // express's own methods and app reference are there, as with node's classes
    expect(typeof b.res.json).to.equal('function');
    expect(b.req.app).to.be.a('function');
    expect(b.req).to.be.instanceOf(http.IncomingMessage);
    expect(b.res).to.be.instanceOf(http.ServerResponse);
  });

  it('merged gives its copies one hidden class, and the value of a spread', () => {
    // In a fresh process: objects built from `{}` share the root map's transitions with every object
    // JSON.parse made before, and a test process that parsed thousands of distinct keys (the
    // validators' suites) can fill them, after which V8 copies maps for key sequences it had not met
    // yet. A server meets its hot objects' keys at its first requests.
    const script = `const { merged } = require(${JSON.stringify(require.resolve('../../../shared/merged'))});
      const make = (i) => merged({ a: i, b: 'x' }, { b: 'y', c: true });
      const [x, y] = [make(1), make(2)];
      process.stdout.write(JSON.stringify({ merged: %HaveSameMap(x, y), value: x, keys: Object.keys(x) }));`;
    const out = JSON.parse(execFileSync(process.execPath, ['--allow-natives-syntax', '-e', script], { encoding: 'utf8' })) as Record<string, unknown>;
    expect(out.merged).to.equal(true);
    expect(out.value).to.deep.equal({ ...{ a: 1, b: 'x' }, ...{ b: 'y', c: true } });
    expect(out.keys).to.deep.equal(['a', 'b', 'c']);
  });
});
