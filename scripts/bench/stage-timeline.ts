import fs from 'fs';
import net from 'net';
import http from 'http';
import path from 'path';
import { Readable } from 'stream';
import { Queue, Worker } from 'bullmq';
import { Agent } from 'undici';

/**
 * A preload (`node --require dist/scripts/bench/stage-timeline.js`) for `npm run bench:stages`
 * (stages.ts): records, on the monotonic clock every process shares, when this process received an
 * HTTP request, called BullMQ's `Queue.add`, wrote to or read from a socket (Redis, an upstream, an
 * HTTP client), began a job (BullMQ's Worker `processJob`, then the processor itself) and handed an
 * upstream request to undici (`Agent.dispatch`), and writes the list to BENCH_TIMELINE_DIR when it exits. Bench-only: it patches
 * node's socket and HTTP server prototypes and BullMQ's Queue in this process.
 */
type Kind = 'request' | 'add' | 'write' | 'read' | 'job' | 'processor' | 'dispatch' | 'layer';
/** [µs on the monotonic clock, kind, the socket's peer ('redis', 'client' or 'upstream'), its first bytes]. */
export type TimelineEvent = [number, Kind, string, string];

const dir = process.env.BENCH_TIMELINE_DIR;
const portOf = (url: string | undefined, fallback: number): number => Number((url && new URL(url).port) || fallback);
const redisPort = portOf(process.env.REDIS_URL, 6379);
const postgresPort = portOf(process.env.DATABASE_URL, 5432);
const events: TimelineEvent[] = [];
const MAX_EVENTS = 500_000;
const now = (): number => Number(process.hrtime.bigint() / 1000n);
const head = (c: unknown): string => (Buffer.isBuffer(c) ? c.toString('latin1', 0, 24) : typeof c === 'string' ? c.slice(0, 24) : '');
const note = (kind: Kind, peer: string, data: string): void => {
  if (events.length < MAX_EVENTS) events.push([now(), kind, peer, data]);
};

const PEER = Symbol('timeline.peer');
type Tagged = net.Socket & { [PEER]?: string; server?: unknown };
function peerOf(s: Tagged): string {
  s[PEER] ??= s.server ? 'client' : s.remotePort === redisPort ? 'redis' : s.remotePort === postgresPort ? 'postgres' : 'upstream';
  return s[PEER];
}

if (dir) {
  const proto = net.Socket.prototype as unknown as {
    _write(chunk: unknown, enc: unknown, cb: unknown): void;
    _writev(chunks: Array<{ chunk: unknown }>, cb: unknown): void;
    push(chunk: unknown, enc?: unknown): boolean;
  };
  const [write, writev] = [proto._write, proto._writev];
  proto._write = function (this: Tagged, chunk, enc, cb) {
    note('write', peerOf(this), head(chunk));
    return write.call(this, chunk, enc, cb);
  };
  proto._writev = function (this: Tagged, chunks, cb) {
    note('write', peerOf(this), head(chunks[0]?.chunk));
    return writev.call(this, chunks, cb);
  };
  // an HTTP server reads its sockets natively (not through push): its requests are the 'request' events below
  proto.push = function (this: Tagged, chunk, enc) {
    if (chunk) note('read', peerOf(this), head(chunk));
    return Readable.prototype.push.call(this, chunk, enc as BufferEncoding);
  };
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (this: http.Server, name: string, ...args: unknown[]) {
    if (name === 'request') note('request', 'client', String((args[0] as http.IncomingMessage).url));
    return (emit as (...a: unknown[]) => boolean).apply(this, [name, ...args]);
  } as typeof emit;
  const add = Queue.prototype.add;
  Queue.prototype.add = function (this: Queue, ...args: unknown[]) {
    note('add', 'redis', String(args[0]));
    return (add as (...a: unknown[]) => ReturnType<Queue['add']>).apply(this, args);
  } as Queue['add'];
  // BullMQ's Worker methods below are its own (not its public API): a bench reading, patched only here
  const wproto = Worker.prototype as unknown as Record<'processJob' | 'callProcessJob', (...a: unknown[]) => unknown>;
  for (const [name, kind] of [['processJob', 'job'], ['callProcessJob', 'processor']] as const) {
    const original = wproto[name];
    if (typeof original !== 'function') continue;
    wproto[name] = function (this: unknown, ...args: unknown[]) {
      note(kind, 'redis', '');
      return original.apply(this, args);
    };
  }
  const dispatch = Agent.prototype.dispatch;
  Agent.prototype.dispatch = function (this: Agent, ...args: Parameters<Agent['dispatch']>) {
    note('dispatch', 'upstream', '');
    return dispatch.apply(this, args);
  };
  if (process.env.BENCH_LAYERS === '1') timeLayers();
  process.on('exit', () => {
    const role = path.relative(path.resolve(__dirname, '..', '..'), process.argv[1] ?? 'unknown').replace(/[\\/]/g, '_');
    fs.writeFileSync(path.join(dir, `${role}.${process.pid}.json`), JSON.stringify(events));
  });
}

/**
 * BENCH_LAYERS=1 (`npm run bench:stages`): each express layer's time, from its call to its `next()`
 * (its own work and whatever it awaited; a layer that answers or hands off without `next` is not
 * counted), as a 'layer' event whose peer is where the layer's function is and whose data is its
 * µs. Patches the router's Layer (its internal class: a bench reading only).
 */
function timeLayers(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  type Handler = (req: unknown, res: unknown, next: (err?: unknown) => void) => unknown;
  const Layer = require('router/lib/layer') as { prototype: { handleRequest: Handler } };
  const original = Layer.prototype.handleRequest;
  const whereOf = new WeakMap<object, string>();
  const where = (fn: Handler, name: string): string => {
    let w = whereOf.get(fn);
    if (w === undefined) {
      const src = Function.prototype.toString.call(fn).replace(/\s+/g, ' ');
      w = `${name} ${src.slice(0, 70)}`;
      whereOf.set(fn, w);
    }
    return w;
  };
  Layer.prototype.handleRequest = function (this: { handle: Handler; name: string; route?: unknown }, req: unknown, res: unknown, next: (err?: unknown) => void) {
    if (this.route) return original.call(this, req, res, next);
    const t0 = now();
    const label = where(this.handle, this.name);
    let done = false;
    return original.call(this, req, res, (err?: unknown) => {
      if (!done) {
        done = true;
        note('layer' as Kind, label, String(now() - t0));
      }
      return next(err);
    });
  };
}
