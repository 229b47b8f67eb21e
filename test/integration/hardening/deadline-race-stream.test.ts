import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { keyHeader } from '../../helpers/http';
import { parseSse } from '../../helpers/sse-events';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';
/** The hub's two private steps this test orders. */
interface Hub {
  onMessage(raw: string): void;
  expire(id: string): void;
}

/**
 * A stream's deadline fires in the same turn as its final message arrives, after the worker
 * published it (so the pod loses the race and must deliver): the stream goes on where it stood.
 * The ordering is forced (the deadline timer's callback runs just before the final message is
 * handled); the race itself is Redis's and the worker's, unchanged.
 */
describe('a streamed request whose deadline fires as its final message arrives', () => {
  let restore: (() => void) | undefined;
  afterEach(() => {
    restore?.();
    restore = undefined;
    resetSim();
  });

  it('delivers every chunk once and [DONE], no error event, billed once', async () => {
    resetSim();
    env().sim.knobs.set('sim-chat-1', { tokenDelayMs: 20, outputWords: 8 });
    const o = await buildOrg(env().redis);
    const hub = env().gw.ctx.replies as unknown as Hub;
    const original = hub.onMessage;
    let fired = 0;
    hub.onMessage = function (this: Hub, raw: string) {
      const m = JSON.parse(raw) as { t: string; i: string };
      if (m.t === 'r' && !fired) {
        fired++;
        this.expire(m.i); // the deadline timer, in the same turn, first
      }
      original.call(this, raw);
    };
    restore = () => (hub.onMessage = original);
    const res = await fetch(`${env().gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', stream: true, messages: [{ role: 'user', content: 'race me' }] }),
    });
    expect(res.status).to.equal(200);
    const events = parseSse(await res.text());
    expect(fired, 'the deadline fired with the final message').to.equal(1);
    expect(events.filter((e) => e.data?.error), 'error events').to.deep.equal([]);
    expect(events[events.length - 1].data).to.equal('[DONE]');
    const words = events.filter((e) => e.data?.choices).map((e) => e.data.choices[0]?.delta?.content ?? '').join('').trim().split(/\s+/);
    expect(words, 'every word once').to.have.length(8);
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: res.headers.get('x-service-request-id')! } }), 'billed once').to.equal(1);
  });
});
