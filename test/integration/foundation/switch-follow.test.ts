import { expect } from 'chai';
import { createRedis } from '../../../shared/redis/connection';
import { keys } from '../../../shared/redis/keys';
import { setSwitch, SwitchBoard } from '../../../shared/switches/switches';
import { env } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';

/**
 * How a pod follows the kill switches: the broadcast alone, and the poll alone (for a missed
 * broadcast). Each test waits for its board to follow, so a slow machine makes it slower, not red;
 * a path that does not work leaves the board behind and the test fails.
 */
describe('kill switches: how a pod follows a change', () => {
  const feature = 'web_search' as const;
  const opened: Array<{ board: SwitchBoard; close(): void }> = [];

  async function board(pollMs: number): Promise<SwitchBoard> {
    const redis = createRedis('command');
    const sub = createRedis('subscriber');
    const b = new SwitchBoard(redis, sub, pollMs);
    await b.start();
    opened.push({ board: b, close: () => (sub.disconnect(), redis.disconnect()) });
    return b;
  }

  afterEach(async () => {
    await setSwitch(env().redis, feature, false);
    for (const o of opened.splice(0)) {
      o.board.stop();
      o.close();
    }
  });

  it('follows the broadcast, with no poll to fall back on', async () => {
    const b = await board(3_600_000);
    expect(b.engaged(feature)).to.equal(false);
    await setSwitch(env().redis, feature, true);
    expect(await waitFor(() => b.engaged(feature), 10_000, 10), 'engaged by the broadcast').to.equal(true);
    await setSwitch(env().redis, feature, false);
    expect(await waitFor(() => !b.engaged(feature), 10_000, 10), 'released by the broadcast').to.equal(true);
  });

  it('follows a change that was never broadcast, by its poll', async () => {
    const b = await board(200);
    await env().redis.hset(keys.switches(), feature, 'engaged'); // written without the PUBLISH
    expect(await waitFor(() => b.engaged(feature), 10_000, 10), 'engaged by the poll').to.equal(true);
    await env().redis.hdel(keys.switches(), feature);
    expect(await waitFor(() => !b.engaged(feature), 10_000, 10), 'released by the poll').to.equal(true);
  });
});
