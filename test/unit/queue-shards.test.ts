import { expect } from 'chai';
import crypto from 'crypto';
import calculateSlot from 'cluster-key-slot';
import { keys } from '../../shared/redis/keys';
import { EXPRESS_TAGS, MAX_QUEUE_SHARDS, SHARD_TAGS, expressShardName, hashTagOf, shardName } from '../../shared/queues/names';
import { shardConcurrency, shardIndexOf, shardPosition } from '../../shared/queues/shards';
import { ConfigError, loadConfig } from '../../shared/config/env';

const SLOTS = 16384;
/** The master of `n` that `redis-cli --cluster create` gives a slot to (n equal ranges in order). */
const masterOf = (slot: number, n: number) => Math.floor((slot * n) / SLOTS);

/** The first n of `tags` (the BullMQ queues `nameOf(i)`) on n different masters of an n-master cluster, and k on each of n / k masters, for every n up to the maximum. */
function expectSpread(tags: readonly string[], nameOf: (i: number) => string): void {
  for (let n = 1; n <= MAX_QUEUE_SHARDS; n++) {
    const masters = tags.slice(0, n).map((_, i) => masterOf(calculateSlot(`${keys.bullPrefix(nameOf(i))}:x:wait`), n));
    expect(new Set(masters).size, `n=${n}: masters ${masters.join(',')}`).to.equal(n);
    for (let m = 1; m < n; m++) {
      if (n % m) continue;
      const perMaster = new Map<number, number>();
      for (const tag of tags.slice(0, n)) perMaster.set(masterOf(calculateSlot(tag), m), (perMaster.get(masterOf(calculateSlot(tag), m)) ?? 0) + 1);
      expect([...perMaster.values()], `n=${n} on ${m} masters`).to.deep.equal(Array(m).fill(n / m));
    }
  }
}

describe('queue shards (QUEUE_SHARDS_CHAT)', () => {
  for (const [queue, tags] of Object.entries(SHARD_TAGS)) {
    it(`keeps ${queue}'s own name and slot for shard 0, and names the others ${queue}-<i>`, () => {
      expect(shardName(queue as keyof typeof SHARD_TAGS, 0)).to.equal(queue);
      expect(keys.bullPrefix(queue)).to.equal(`${keys.bullPrefix('x').split(':{')[0]}:{${queue}}`);
      expect(shardName(queue as keyof typeof SHARD_TAGS, 3)).to.equal(`${queue}-3`);
      expect(hashTagOf(`${queue}-3`)).to.equal(tags[3]);
      expect(tags).to.have.length(MAX_QUEUE_SHARDS);
    });

    it(`puts the first n shards of ${queue} on n different masters of an n-master cluster, for every n up to ${MAX_QUEUE_SHARDS}`, () => {
      expectSpread(tags, (i) => shardName(queue as keyof typeof SHARD_TAGS, i));
    });
  }

  for (const [queue, tags] of Object.entries(EXPRESS_TAGS)) {
    it(`puts the first n express shards of ${queue} on n different masters of an n-master cluster, and maps their names back`, () => {
      expect(tags).to.have.length(MAX_QUEUE_SHARDS);
      expectSpread(tags, (i) => expressShardName(tags[0], i));
      expect(shardPosition(tags[0])).to.deep.equal({ queue, index: 0, express: true });
      expect(shardPosition(`${tags[0]}-2`)).to.deep.equal({ queue, index: 2, express: true });
      expect(hashTagOf(`${tags[0]}-2`)).to.equal(tags[2]);
    });
  }

  it('picks a job’s shard from its id: the same on every call, spread evenly over the shards', () => {
    const ids = Array.from({ length: 6000 }, () => crypto.randomUUID());
    for (const n of [2, 3, 5]) {
      const per = Array(n).fill(0);
      for (const id of ids) per[shardIndexOf(id, n)]++;
      for (const c of per) expect(c, `${n} shards: ${per.join(',')}`).to.be.within((0.85 * ids.length) / n, (1.15 * ids.length) / n);
      expect(ids.slice(0, 50).map((id) => shardIndexOf(id, n))).to.deep.equal(ids.slice(0, 50).map((id) => shardIndexOf(id, n)));
    }
    expect(ids.every((id) => shardIndexOf(id, 1) === 0)).to.equal(true);
    expect(shardIndexOf('req_fixed', 3), 'a fixed id, a fixed shard').to.equal(shardIndexOf('req_fixed', 3));
  });

  it('splits a process’s concurrency evenly over the shards (rounded up, at least 1 each)', () => {
    expect(shardConcurrency(64, 1)).to.equal(64);
    expect(shardConcurrency(64, 4)).to.equal(16);
    expect(shardConcurrency(64, 3), 'equal shares, 66 in all').to.equal(22);
    expect(shardConcurrency(8, 3)).to.equal(3);
    expect(shardConcurrency(2, 4), 'fewer slots than shards').to.equal(1);
  });

  it('maps a shard’s name back to its queue and index; other names to themselves or nothing', () => {
    expect(shardPosition('chat-interactive')).to.deep.equal({ queue: 'chat-interactive', index: 0 });
    expect(shardPosition('chat-interactive-2')).to.deep.equal({ queue: 'chat-interactive', index: 2 });
    expect(shardPosition('chat-background-7')).to.deep.equal({ queue: 'chat-background', index: 7 });
    expect(shardPosition('embeddings')).to.deep.equal({ queue: 'embeddings', index: 0 });
    expect(shardPosition('embeddings-1')).to.deep.equal({ queue: 'embeddings', index: 1 });
    expect(shardPosition('audio')).to.deep.equal({ queue: 'audio', index: 0 });
    expect(shardPosition('audio-1'), 'audio is not sharded').to.equal(undefined);
    expect(shardPosition('nope')).to.equal(undefined);
  });

  it('reads QUEUE_SHARDS_CHAT and QUEUE_SHARDS_EMBEDDINGS: 1 on one node, 3 on a cluster, 1 to 8 when set; anything else is a configuration error naming it', () => {
    const base = { DATABASE_URL: 'postgres://u@127.0.0.1/db', REDIS_URL: 'redis://127.0.0.1:6379', SECRET_KEY: 'abcdefghijklmnopqrstuvwxyz0123456789' };
    const cluster = { ...base, REDIS_CLUSTER_NODES: '127.0.0.1:7000,127.0.0.1:7001' };
    expect(loadConfig(base).queueShardsChat).to.equal(1);
    expect(loadConfig(cluster).queueShardsChat).to.equal(3);
    expect(loadConfig({ ...cluster, QUEUE_SHARDS_CHAT: '8' }).queueShardsChat).to.equal(8);
    expect(loadConfig({ ...base, QUEUE_SHARDS_CHAT: '2' }).queueShardsChat).to.equal(2);
    for (const bad of ['0', '9', 'two', '1.5']) {
      expect(() => loadConfig({ ...base, QUEUE_SHARDS_CHAT: bad }), bad).to.throw(ConfigError, /QUEUE_SHARDS_CHAT/);
      expect(() => loadConfig({ ...base, QUEUE_SHARDS_EMBEDDINGS: bad }), bad).to.throw(ConfigError, /QUEUE_SHARDS_EMBEDDINGS/);
    }
    expect([loadConfig(base).queueShardsEmbeddings, loadConfig(cluster).queueShardsEmbeddings], 'QUEUE_SHARDS_EMBEDDINGS defaults').to.deep.equal([1, 3]);
  });
});
