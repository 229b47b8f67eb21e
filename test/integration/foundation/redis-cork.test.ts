import { expect } from 'chai';
import type { Socket } from 'net';
import { Redis } from 'ioredis';
import { createRedis, type RedisClient } from '../../../shared/redis/connection';
import { corkPerTurn, flushAfterQueuedImmediates, type CorkUntil } from '../../../shared/redis/cork';
import { config } from '../../../shared/config/env';

/**
 * shared/redis/cork.ts: the commands written on one connection in one event-loop iteration leave in
 * one socket write; a command in a later iteration is not held back; a reconnected socket is corked too.
 */
describe('redis connections: one socket write per loop iteration', () => {
  const prefix = `gwtest-cork-${process.pid}`;
  let redis: RedisClient;
  let writes: { single: number; vectored: number };

  const spied = new WeakSet<Socket>();
  /** Counts the socket's system-level writes from now on: `_write` for one buffer, `_writev` for several. */
  const spy = () => {
    const s = (redis as unknown as { stream: Socket & { _write: (...a: unknown[]) => void; _writev: (...a: unknown[]) => void } }).stream;
    writes = { single: 0, vectored: 0 };
    if (spied.has(s)) return;
    spied.add(s);
    const [w, wv] = [s._write.bind(s), s._writev.bind(s)];
    s._write = (...a: unknown[]) => (writes.single++, w(...a));
    s._writev = (...a: unknown[]) => (writes.vectored++, wv(...a));
  };

  before(async () => {
    redis = createRedis('command', undefined, true);
    await redis.ping();
  });
  after(async () => {
    await redis.del(`${prefix}:a`, `${prefix}:b`, `${prefix}:c`);
    redis.disconnect();
  });

  it('writes three commands of one turn in one writev, and answers each', async () => {
    spy();
    const replies = await Promise.all([redis.set(`${prefix}:a`, '1'), redis.set(`${prefix}:b`, '2'), redis.incr(`${prefix}:c`)]);
    expect(replies).to.deep.equal(['OK', 'OK', 1]);
    expect(writes).to.deep.equal({ single: 0, vectored: 1 });
  });

  it('does not hold a command past its turn: each awaited command is its own write', async () => {
    spy();
    expect(await redis.get(`${prefix}:a`)).to.equal('1');
    expect(await redis.get(`${prefix}:b`)).to.equal('2');
    expect(writes.single + writes.vectored).to.equal(2);
  });

  it('commands issued in the promise continuations of one reply leave together', async () => {
    await redis.ping();
    spy();
    // both continuations run in the microtasks of the turn that read the PING's reply
    const ping = redis.ping();
    const [a, b] = await Promise.all([ping.then(() => redis.get(`${prefix}:a`)), ping.then(() => redis.get(`${prefix}:b`))]);
    expect([a, b]).to.deep.equal(['1', '2']);
    expect(writes.single + writes.vectored, 'PING, then both GETs in one write').to.equal(2);
  });

  it('writes a burst of one turn in pieces of at most about 64 KB', async () => {
    spy();
    const value = 'v'.repeat(1024);
    const replies = await Promise.all(Array.from({ length: 200 }, (_, i) => redis.set(`${prefix}:burst:${i}`, value)));
    expect(replies.every((r) => r === 'OK')).to.equal(true);
    // about 206 KB of commands: three or four writes, not one, not two hundred
    expect(writes.single + writes.vectored).to.be.within(3, 5);
    await redis.del(...Array.from({ length: 200 }, (_, i) => `${prefix}:burst:${i}`));
  });

  /**
   * Socket writes of `n` commands, each issued by its own callback of one loop iteration: `n`
   * immediates queued together run in one check phase, with the ticks of each in between (as `n` HTTP
   * requests read in one poll are `n` callbacks); an immediate queued while they run (the cork's
   * uncork) runs in the next iteration, so what they wrote is still held until all `n` have run.
   */
  async function writesOfCallbacks(client: RedisClient, n: number): Promise<number> {
    await client.ping();
    const s = (client as unknown as { stream: Socket & { _write: (...a: unknown[]) => void; _writev: (...a: unknown[]) => void } }).stream;
    let count = 0;
    const [w, wv] = [s._write.bind(s), s._writev.bind(s)];
    s._write = (...a: unknown[]) => (count++, w(...a));
    s._writev = (...a: unknown[]) => (count++, wv(...a));
    const replies = await Promise.all(Array.from({ length: n }, (_, i) => new Promise((resolve, reject) => setImmediate(() => client.get(`${prefix}:${'abc'[i % 3]}`).then(resolve, reject)))));
    expect(replies).to.have.length(n);
    return count;
  }

  function corkedClient(until: CorkUntil): Redis {
    const r = new Redis(config().redisUrl);
    corkPerTurn(r, until);
    return r;
  }

  it('writes the commands of several callbacks of one iteration in one write (the default)', async () => {
    expect(config().redisCorkUntil).to.equal('iteration');
    spy();
    const count = await writesOfCallbacks(redis, 4);
    expect(count, 'four callbacks, one write').to.equal(1);
  });

  it('commands issued after a wait for the poll to end (Directory.sync) leave in that check phase, in one write', async () => {
    await redis.ping();
    spy();
    // three requests read in one poll (here: one timer callback), each waiting one setImmediate before it
    // sends its command, as authentication does; a probe queued after them reads the writes made so far
    const gets: Array<Promise<string | null>> = [];
    const atProbe = await new Promise<number>((resolve) =>
      setTimeout(() => {
        for (const k of ['a', 'b', 'c']) {
          gets.push(
            new Promise<void>((r) => {
              setImmediate(r);
              flushAfterQueuedImmediates();
            }).then(() => redis.get(`${prefix}:${k}`)),
          );
        }
        setImmediate(() => resolve(writes.single + writes.vectored));
      }, 0),
    );
    expect(atProbe, 'written in the check phase of the iteration they were issued in, together').to.equal(1);
    expect(await Promise.all(gets)).to.deep.equal(['1', '2', '1']);
    expect(writes.single + writes.vectored, 'no second write for them').to.equal(1);
  });

  it('REDIS_CORK_UNTIL=tick: each callback writes its own', async () => {
    const r = corkedClient('tick');
    try {
      expect(await writesOfCallbacks(r, 4)).to.equal(4);
    } finally {
      r.disconnect();
    }
  });

  it('corks the new socket after a reconnect', async () => {
    const before = (redis as unknown as { stream: Socket }).stream;
    const ready = new Promise((r) => redis.once('ready', r));
    before.destroy();
    await ready;
    expect((redis as unknown as { stream: Socket }).stream).to.not.equal(before);
    spy();
    const replies = await Promise.all([redis.get(`${prefix}:a`), redis.get(`${prefix}:b`)]);
    expect(replies).to.deep.equal(['1', '2']);
    expect(writes).to.deep.equal({ single: 0, vectored: 1 });
  });
});
