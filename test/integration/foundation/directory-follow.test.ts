import type { Redis } from 'ioredis';
import { expect } from 'chai';
import { Directory } from '../../../shared/tenancy/directory';
import { createRedis } from '../../../shared/redis/connection';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { keys } from '../../../shared/redis/keys';
import { env } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';

/**
 * The web pod's cache of keys and orgs follows the cache epoch over pub/sub (no Redis read per
 * request) and falls back to reading it on every request while its subscriber is down.
 */
/** A directory following the epoch on its own connections; `drops()` counts its invalidations. */
async function followedDirectory() {
  const redis = createRedis('command');
  const sub = createRedis('subscriber');
  const dir = new Directory(redis);
  let drops = 0;
  dir.onChange(() => drops++);
  await dir.follow(sub);
  return {
    dir,
    sub,
    drops: () => drops,
    close() {
      sub.disconnect();
      redis.disconnect();
    },
  };
}

describe('directory: epoch followed over pub/sub', () => {
  it('drops its entries when a writer bumps the epoch, and reads the epoch per request while unsubscribed', async () => {
    const f = await followedDirectory();
    const { dir, sub } = f;
    try {
      const start = f.drops();
      await bumpEpoch(env().redis);
      expect(await waitFor(() => f.drops() > start, 2000, 5), 'invalidated by the published bump').to.equal(true);

      // Followed: a bare INCR without the announcement is not read (no GET per request)...
      const quiet = f.drops();
      await env().redis.incr(keys.cacheEpoch());
      await dir.sync();
      expect(f.drops()).to.equal(quiet);

      // ...until the subscriber goes away: then every sync reads the epoch from Redis again.
      sub.disconnect();
      await waitFor(() => sub.status === 'end', 2000, 5);
      await dir.sync();
      expect(f.drops(), 'read on sync once unsubscribed').to.equal(quiet + 1);
      await env().redis.incr(keys.cacheEpoch());
      await dir.sync();
      expect(f.drops()).to.equal(quiet + 2);
    } finally {
      f.close();
    }
  });

  it('sees every acknowledged bump on the very next sync (no waiting), 300 times in a row', async () => {
    const f = await followedDirectory();
    try {
      let stale = 0;
      for (let i = 0; i < 300; i++) {
        const before = f.drops();
        await bumpEpoch(env().redis); // acknowledged: the writer would now answer its client
        await f.dir.sync(); // the next request on this pod
        if (f.drops() === before) stale++;
      }
      expect(stale, 'syncs that missed an acknowledged bump').to.equal(0);
    } finally {
      f.close();
    }
  });

  it('catches up after its subscriber reconnects, including a bump it missed while away', async () => {
    const f = await followedDirectory();
    const { sub } = f;
    try {
      const before = f.drops();
      // Drop the connection (ioredis reconnects); the bump lands while it is away or reconnecting.
      const reconnected = new Promise<void>((resolve) => sub.once('ready', () => resolve()));
      (sub as Redis).stream.destroy();
      await env().redis.incr(keys.cacheEpoch());
      await reconnected;
      expect(await waitFor(() => f.drops() > before, 2000, 5), 'the missed bump is read on resubscribe').to.equal(true);
      const after = f.drops();
      await bumpEpoch(env().redis);
      expect(await waitFor(() => f.drops() > after, 2000, 5), 'followed again after the reconnect').to.equal(true);
    } finally {
      f.close();
    }
  });
});
