import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';
import { CancelListener } from '../../../shared/queues/cancel';
import { createRedis } from '../../../shared/redis/connection';
import { keys } from '../../../shared/redis/keys';

/** Every worker hears every cancel of its queues; what it remembers of them is bounded in size and age. */
describe('worker cancel memory', () => {
  it('remembers at most `max` cancels, each for at most `ttlMs`, and still aborts a job cancelled just before it started', async () => {
    const sub = createRedis('subscriber');
    const listener = new CancelListener(sub, { max: 50, ttlMs: 400 });
    try {
      await listener.start(['chat-interactive']);
      const tag = `cm-${Date.now()}`;
      const publish = (id: string) => env().redis.spublish(keys.cancelChannel('chat-interactive'), `${tag}-${id}`);
      // A cancel for a running job (tracked) marks where the listener has read up to: messages arrive in order.
      const readUpTo = async (mark: string) => {
        const c = listener.track(`${tag}-${mark}`);
        await publish(mark);
        expect(await waitFor(() => c.signal.aborted, 3000, 10), `cancel ${mark} heard`).to.equal(true);
        listener.untrack(`${tag}-${mark}`);
      };
      for (let i = 0; i < 200; i++) await publish(String(i));
      await readUpTo('end');
      expect(listener.remembered, 'bounded in size').to.equal(50);
      expect(listener.track(`${tag}-199`).signal.aborted, 'the newest cancel is remembered').to.equal(true);
      expect(listener.track(`${tag}-0`).signal.aborted, 'the oldest was evicted').to.equal(false);

      listener.untrack(`${tag}-199`);
      listener.untrack(`${tag}-0`);
      expect(listener.running, 'jobs tracked and not untracked').to.equal(0);
      listener.track(`${tag}-a`);
      listener.track(`${tag}-b`);
      expect(listener.running).to.equal(2);
      listener.untrack(`${tag}-a`);
      listener.untrack(`${tag}-b`);
      expect(listener.running).to.equal(0);

      await publish('late');
      await readUpTo('end2');
      await new Promise((r) => setTimeout(r, 600));
      expect(listener.remembered, 'nothing older than the ttl is kept').to.equal(0);
      expect(listener.track(`${tag}-late`).signal.aborted, 'forgotten after its ttl').to.equal(false);
    } finally {
      sub.disconnect();
    }
  });
});
