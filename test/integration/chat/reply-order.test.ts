import { expect } from 'chai';
import { createRedis } from '../../../shared/redis/connection';
import { ReplyPublisher } from '../../../shared/queues/reply-publisher';
import type { ReplyMessage } from '../../../shared/queues/reply-messages';
import { waitFor } from '../../helpers/wait';

/**
 * The worker holds stream chunks made in one event-loop turn and sends each request's as one message
 * (`b`), all issued together (a stream's first message before the turn ends); the pod must still
 * receive every chunk in order, and a result or error after the chunks (sharded pub/sub).
 */
/** Each chunk a message carries, as [seq, data], with `r`/`e` for the final messages. */
const expand = (m: ReplyMessage): Array<[number, string] | string> =>
  m.t === 'c'
    ? [[m.s, m.d]]
    : m.t === 'b'
      ? m.d.map((d, k): [number, string] => [m.s + k, d])
      : m.t === 'r' && m.h
        ? [...m.h.d.map((d, k): [number, string] => [m.h!.s + k, d]), 'r'] // a result carries the chunks still held
        : [m.t];
describe('reply publisher: chunk batching keeps the order', () => {
  const channel = `gwtest-reply-order-${process.pid}`;
  const sub = createRedis('subscriber');
  const pub = createRedis('command');
  const publisher = new ReplyPublisher(pub);
  const got: ReplyMessage[] = [];
  before(async () => {
    sub.on('smessage', (ch: string, raw: string) => ch === channel && got.push(JSON.parse(raw) as ReplyMessage));
    await sub.ssubscribe(channel);
  });
  beforeEach(() => (got.length = 0));
  after(() => {
    sub.disconnect();
    pub.disconnect();
  });

  it('sends the first chunk with the rest of its synchronous run before the turn ends, a later turn as one message, then the result', async () => {
    const sent = [publisher.chunk(channel, 'job-z', 0, 'z0')];
    await new Promise((r) => setImmediate(r));
    sent.push(...Array.from({ length: 3 }, (_, i) => publisher.chunk(channel, 'job-z', i + 1, `z${i + 1}`)));
    await new Promise((r) => setImmediate(r)); // the turn ends with them held: they leave as one message
    sent.push(publisher.chunk(channel, 'job-z', 4, 'z4'));
    await publisher.result(channel, 'job-z', 5, { ok: true });
    await Promise.all(sent);
    await waitFor(() => got.some((m) => m.t === 'r'), 2000, 5);
    expect(got.flatMap(expand)).to.deep.equal([[0, 'z0'], [1, 'z1'], [2, 'z2'], [3, 'z3'], [4, 'z4'], 'r']);
    expect(got.map((m) => (m.t === 'b' ? `b${m.d.length}` : m.t === 'r' ? `r+${m.h?.d.length ?? 0}` : m.t)), 'the chunk held at the result goes with it').to.deep.equal(['c', 'b3', 'r+1']);
  });

  it('sends the chunks of the result\'s own turn with the result: the first message, then the result carrying the rest', async () => {
    got.length = 0;
    let published = 0;
    const spublish = pub.spublish.bind(pub);
    pub.spublish = ((...a: Parameters<typeof pub.spublish>) => (published++, spublish(...a))) as typeof pub.spublish;
    try {
      // the route metadata and the first upstream read's event, emitted in one synchronous run
      const sent = [publisher.chunk(channel, 'job-a', 0, 'c0'), publisher.chunk(channel, 'job-a', 1, 'c1')];
      await null; // one microtask later, still in the same event-loop turn
      expect(published, 'the first message left before the turn ended, as one message').to.equal(1);
      await new Promise((r) => setImmediate(r));
      sent.push(...Array.from({ length: 48 }, (_, i) => publisher.chunk(channel, 'job-a', i + 2, `c${i + 2}`)));
      await publisher.result(channel, 'job-a', 50, { ok: true });
      await Promise.all(sent);
    } finally {
      pub.spublish = spublish;
    }
    await waitFor(() => got.some((m) => m.t === 'r'), 2000, 5);
    expect(got.flatMap(expand)).to.deep.equal([...Array.from({ length: 50 }, (_, i): [number, string] => [i, `c${i}`]), 'r']);
    // the first two chunks as one message, then the result with the other 48 of the next turn, held when it was ready
    expect(got.map((m) => (m.t === 'b' ? `b${m.d.length}` : m.t === 'r' ? `r+${m.h?.d.length ?? 0}` : m.t))).to.deep.equal(['b2', 'r+48']);
  });

  it('a job of a pod that does not take a result with chunks (no replyTail) gets its held chunks first, as before', async () => {
    got.length = 0;
    const sent = [publisher.chunk(channel, 'job-old', 0, 'o0')];
    await new Promise((r) => setImmediate(r));
    sent.push(publisher.chunk(channel, 'job-old', 1, 'o1'), publisher.chunk(channel, 'job-old', 2, 'o2'));
    await publisher.result(channel, 'job-old', 3, { ok: true }, undefined, undefined, false, undefined, false);
    await Promise.all(sent);
    await waitFor(() => got.some((m) => m.t === 'r'), 2000, 5);
    expect(got.map((m) => (m.t === 'b' ? `b${m.d.length}` : m.t === 'r' ? `r+${m.h?.d.length ?? 0}` : m.t))).to.deep.equal(['c', 'b2', 'r+0']);
  });

  it('sends held chunks before an error, and interleaves two jobs without reordering either', async () => {
    publisher.chunk(channel, 'job-b', 0, 'b0');
    publisher.chunk(channel, 'job-c', 0, 'c0');
    publisher.chunk(channel, 'job-b', 1, 'b1');
    publisher.chunk(channel, 'job-c', 1, 'c1');
    await publisher.error(channel, 'job-b', { status: 502, code: 'upstream_error', message: 'x' });
    await new Promise((r) => setImmediate(r));
    await publisher.result(channel, 'job-c', 2, 'done');
    await waitFor(() => got.filter((m) => m.t === 'e' || m.t === 'r').length === 2, 2000, 5);
    const of = (id: string) => got.filter((m) => m.i === id).flatMap(expand).map((x) => (typeof x === 'string' ? x : x[1]));
    expect(of('job-b')).to.deep.equal(['b0', 'b1', 'e']);
    expect(of('job-c')).to.deep.equal(['c0', 'c1', 'r']);
  });
});

/**
 * On a corked connection (shared/redis/cork.ts) a stream's first message is written at once while
 * few streams are open, not when the turn ends: time to first token when the rest of the upstream
 * read keeps the turn busy.
 */
describe('reply publisher: the first message of a stream is not held by the cork', () => {
  const channel = `gwtest-reply-first-${process.pid}`;
  const pub = createRedis('command', undefined, true);
  const publisher = new ReplyPublisher(pub);
  after(() => pub.disconnect());

  it('writes the first message within the microtasks of its turn, before the turn ends', async () => {
    await pub.ping();
    const s = (pub as unknown as { stream: import('net').Socket & { _write: (...a: unknown[]) => void; _writev: (...a: unknown[]) => void } }).stream;
    let writes = 0;
    const [w, wv] = [s._write.bind(s), s._writev.bind(s)];
    s._write = (...a: unknown[]) => (writes++, w(...a));
    s._writev = (...a: unknown[]) => (writes++, wv(...a));
    let tickRan = false;
    process.nextTick(() => (tickRan = true)); // the cork's uncork runs no earlier than this
    const sent = publisher.chunk(channel, 'job-first', 0, 'c0');
    await null;
    await null;
    expect(tickRan, 'still inside the turn').to.equal(false);
    expect(writes, 'the first message is on the socket').to.equal(1);
    await sent;
    await publisher.result(channel, 'job-first', 1, { ok: true });
  });

  it('while many jobs run in the process, the first message leaves with the rest of the turn, not on its own', async () => {
    await pub.ping();
    const running = { n: 64 };
    const busy = new ReplyPublisher(pub, () => running.n);
    const s = (pub as unknown as { stream: import('net').Socket & { _write: (...a: unknown[]) => void; _writev: (...a: unknown[]) => void } }).stream;
    let writes = 0;
    const [w, wv] = [s._write.bind(s), s._writev.bind(s)];
    s._write = (...a: unknown[]) => (writes++, w(...a));
    s._writev = (...a: unknown[]) => (writes++, wv(...a));
    try {
      const sent = busy.chunk(channel, 'job-busy', 0, 'c0');
      await null;
      await null;
      expect(writes, 'held by the cork while 64 jobs run').to.equal(0);
      await sent;
      expect(writes, 'written at the end of the turn').to.equal(1);
      await busy.result(channel, 'job-busy', 1, { ok: true });
      // and at low load again (the process's last jobs), at once
      running.n = 1;
      writes = 0;
      const first = busy.chunk(channel, 'job-quiet', 0, 'c0');
      await null;
      await null;
      expect(writes, 'one job running: the first message is on the socket').to.equal(1);
      await first;
      await busy.result(channel, 'job-quiet', 1, { ok: true });
    } finally {
      s._write = w;
      s._writev = wv;
    }
  });
});
