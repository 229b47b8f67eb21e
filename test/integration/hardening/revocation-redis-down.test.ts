import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { startOwnRedis } from '../../helpers/own-redis';
import { waitFor } from '../../helpers/wait';
import { ApiKey } from '../../../shared/db/models';
import { Directory } from '../../../shared/tenancy/directory';
import { createRedis } from '../../../shared/redis/connection';
import { sha256Hex } from '../../../shared/crypto';

/** Seconds within which a revocation committed while Redis was away must take effect once it is back. */
const BOUND_MS = 8000;

/** Whether the directory now sees the key as revoked (false while Redis still refuses). */
async function seesRevoked(dir: Directory, hash: string): Promise<boolean> {
  try {
    await dir.sync();
    return (await dir.keyByHash(hash))?.revoked === true;
  } catch {
    return false;
  }
}

describe('revocation while Redis was unreachable', function () {
  this.timeout(40_000);

  it('a key revoked while Redis was down fails within a bound once Redis is back (followed and unfollowed pods)', async () => {
    const redis = await startOwnRedis();
    const conns = [createRedis('command', redis.url), createRedis('subscriber', redis.url), createRedis('command', redis.url)];
    for (const c of conns) c.on('error', () => undefined);
    const [cmd, sub, cmd2] = conns;
    try {
      const followed = new Directory(cmd);
      await followed.follow(sub);
      const polling = new Directory(cmd2); // reads the epoch on every request
      const o = await buildOrg(env().redis);
      const hash = sha256Hex(o.key);
      for (const dir of [followed, polling]) {
        await dir.sync();
        expect((await dir.keyByHash(hash))!.revoked).to.equal(false);
      }

      await redis.stop();
      expect(await seesRevoked(polling, hash)).to.equal(false); // the epoch read fails while Redis is away
      // The revocation commits; its writer cannot bump the epoch (Redis is unreachable), so Redis comes back
      // with the very epoch the pods last saw.
      await ApiKey.update({ revokedAt: new Date() }, { where: { id: o.keyId } });
      await redis.start();
      const back = Date.now();

      for (const [name, dir] of [['followed', followed], ['polling', polling]] as const) {
        const done = await waitFor(() => seesRevoked(dir, hash), BOUND_MS, 50);
        expect(done, `${name} pod still accepts the revoked key ${Date.now() - back} ms after Redis returned`).to.equal(true);
      }
    } finally {
      for (const c of conns) c.disconnect();
      await redis.stop();
    }
  });

  it('a revocation whose epoch bump was lost takes effect within the cache max age, whatever Redis did', async () => {
    const dir = new Directory(env().redis, { maxAgeMs: 500 });
    const o = await buildOrg(env().redis);
    const hash = sha256Hex(o.key);
    await dir.sync();
    expect((await dir.keyByHash(hash))!.revoked).to.equal(false);
    await ApiKey.update({ revokedAt: new Date() }, { where: { id: o.keyId } }); // no bump
    await dir.sync();
    expect((await dir.keyByHash(hash))!.revoked, 'still cached within the max age').to.equal(false);
    await new Promise((r) => setTimeout(r, 600));
    await dir.sync();
    expect((await dir.keyByHash(hash))!.revoked).to.equal(true);
  });
});
