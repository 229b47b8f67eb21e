import { expect } from 'chai';
import type { Cluster } from 'ioredis';
import { buildOrg } from '../helpers/factories';
import { keyHeader } from '../helpers/http';
import { waitFor } from '../helpers/wait';
import { UsageEvent } from '../../shared/db/models';
import { config } from '../../shared/config/env';
import { keys } from '../../shared/redis/keys';
import { clusterEnv, usageSettled } from './env';

/** The `data:` payloads of a chat-completions event stream, in order. */
const dataOf = (text: string) =>
  text
    .split('\n\n')
    .filter((b) => b.startsWith('data: '))
    .map((b) => b.slice(6));

/**
 * On a cluster each shard has a subscriber connection of its own, replaced by ioredis when it breaks
 * (`-node`, then `subscribersReady`, never `close` on the cluster object). Pod web-a must raise its
 * reply channels' epochs then too, so the worker keeps the chunks published while nobody listened
 * and the stream is completed from them (shared/queues/reply-hub.ts, reply-store.ts).
 */
describe('on a Redis Cluster: a pod’s shard subscriber breaks mid-stream', () => {
  const channels = () => Array.from({ length: config().usageOutboxStreams }, (_, i) => keys.replyChannel('web-a', i));
  const epochs = () => Promise.all(channels().map(async (ch) => Number(await clusterEnv().redis.get(keys.replyEpoch(ch)))));

  /** Kills every pod's sharded subscriber connection on every master (ioredis replaces them). */
  async function killShardSubscribers(): Promise<number> {
    let killed = 0;
    for (const node of (clusterEnv().redis as Cluster).nodes('master')) {
      const list = String(await node.call('CLIENT', 'LIST', 'TYPE', 'pubsub'));
      for (const line of list.split('\n')) {
        if (!/ name=ioredis-cluster\(ssubscriber\):gw-subscriber /.test(line) || / ssub=0 /.test(line)) continue;
        await node.call('CLIENT', 'KILL', 'ID', line.match(/^id=(\d+)/)![1]);
        killed++;
      }
    }
    return killed;
  }

  it('completes the stream from the kept chunks, in order, billed once', async function () {
    this.timeout(30_000);
    const e = clusterEnv();
    e.sim.knobs.reset();
    const o = await buildOrg(e.redis);
    e.sim.knobs.set('sim-chat-1', { tokenDelayMs: 40, outputWords: 30 });
    const before = await epochs();
    const res = await fetch(`${e.webs[0].url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', stream: true, messages: [{ role: 'user', content: 'break my shard subscriber' }] }),
    });
    expect(res.status).to.equal(200);
    const id = res.headers.get('x-service-request-id')!;
    const reader = res.body!.getReader();
    let text = new TextDecoder().decode((await reader.read()).value); // the first events arrived
    expect(await killShardSubscribers(), 'shard subscribers killed').to.be.greaterThan(0);
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);

    const data = dataOf(text);
    expect(data[data.length - 1], 'the stream ends with [DONE]').to.equal('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as { error?: unknown; choices: Array<{ delta: { content?: string } }> });
    expect(chunks.filter((c) => c.error), 'no error event').to.deep.equal([]);
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(content.trim().split(/\s+/), 'every word, in order').to.have.length(30);

    const after = await epochs();
    after.forEach((n, i) => expect(n, `epoch of ${channels()[i]}`).to.be.greaterThan(before[i]));
    const kept = await waitFor(async () => (await Promise.all(channels().map((ch) => e.redis.get(keys.replyResult(ch, id))))).some((k) => k !== null), 3000);
    expect(kept, 'a kept copy').to.equal(true);
    const copy = (await Promise.all(channels().map((ch) => e.redis.get(keys.replyResult(ch, id))))).find((k) => k !== null)!;
    expect(JSON.parse(copy), 'the chunks were kept').to.have.property('c').that.is.an('array').with.length.greaterThan(2);
    // the pod's subscription is back: the next stream through it is answered whole
    e.sim.knobs.reset();
    const next = await fetch(`${e.webs[0].url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', stream: true, messages: [{ role: 'user', content: 'after' }] }),
    });
    expect(dataOf(await next.text()).pop()).to.equal('[DONE]');
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: id } }), 'billed once').to.equal(1);
  });
});
