import { expect } from 'chai';
import { ReplyHub } from '../../../shared/queues/reply-hub';
import { Queues } from '../../../shared/queues/queues';
import { createRedis } from '../../../shared/redis/connection';
import type { WireError } from '../../../shared/errors/ApiError';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('reply recovery before the job is added', () => {
  it('does not answer worker_lost for a job whose add has not returned yet (slow under load), and does once it has', async () => {
    const sub = createRedis('subscriber');
    const producer = createRedis('producer');
    const queues = new Queues(producer);
    const command = createRedis('command');
    const hub = new ReplyHub(sub, queues, `recover-pod-${Date.now()}`, 50, command); // a sweep every 25 ms
    await hub.start();
    try {
      const errors: WireError[] = [];
      const id = `req_never_added_${Date.now()}`;
      hub.register(id, 'chat-interactive', { onResult: () => expect.fail('no result'), onError: (e) => errors.push(e) }, Date.now() + 10_000, () => undefined);
      await sleep(400); // many sweeps find no job in its shard: the add is still on its way
      expect(errors, 'no answer while the add has not returned').to.deep.equal([]);
      expect(hub.size).to.equal(1);
      hub.added(id); // the add returned, yet the job is not there: its worker took and lost it
      const until = Date.now() + 3000;
      while (!errors.length && Date.now() < until) await sleep(20);
      expect(errors.map((e) => e.code)).to.deep.equal(['worker_lost']);
      expect(hub.size).to.equal(0);
    } finally {
      await hub.stop();
      await queues.close();
      sub.disconnect();
      producer.disconnect();
      command.disconnect();
    }
  });
});
