import { expect } from 'chai';
import { Job } from 'bullmq';
import { env, resetSim, startGateway, type TestGateway } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { parseSse } from '../../helpers/sse-events';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';
import { keys } from '../../../shared/redis/keys';

/**
 * A pod that misses the reply on pub/sub (its subscriber was away when the worker published)
 * answers from the copy the worker's publishing script kept (shared/queues/reply-store.ts), not from
 * the job's return value, which no longer holds the answer; the usage held for it is billed once.
 */
describe('reply recovery: a missed reply is answered from the kept result', () => {
  let pod: TestGateway;
  let o: TestOrg;
  before(async () => {
    pod = await startGateway();
  });
  after(async () => {
    await pod.close();
  });
  beforeEach(async () => {
    await resetSim();
    o = await buildOrg(env().redis);
    // the pod's subscriber stops hearing its reply channels: every reply is missed
    await pod.ctx.sub.sunsubscribe(...pod.ctx.replies.channels);
  });
  afterEach(async () => {
    await pod.ctx.sub.ssubscribe(...pod.ctx.replies.channels);
  });

  const job = (id: string) => Job.fromId(env().gw.ctx.queues.forJob('chat-interactive', id) as never, id);
  /** The answer kept for request `id` on whichever of the pod's reply channels it was given. */
  const keptCopy = async (id: string) => (await Promise.all(pod.ctx.replies.channels.map((ch) => env().redis.get(keys.replyResult(ch, id))))).find((k) => k !== null);

  it('JSON chat: the job is removed on completion, the pod answers 200 from the kept copy, billed once', async () => {
    const r = await call('POST', '/v1/chat/completions', { base: pod.url, headers: keyHeader(o.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'recover me' }] } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.object).to.equal('chat.completion');
    expect(r.body.model).to.equal('sim-chat');
    expect(r.body.choices[0].message.content).to.be.a('string').and.not.equal('');
    const id = r.headers.get('x-service-request-id')!;
    expect(await job(id), 'the completed job is gone (removeOnComplete)').to.equal(undefined);
    expect(await keptCopy(id), 'the kept copy holds the answer').to.include(r.body.choices[0].message.content);
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: id } }), 'the held usage billed once').to.equal(1);
  });

  it('streamed chat: every event and [DONE] from the kept chunks, billed once', async () => {
    const res = await fetch(`${pod.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...keyHeader(o.key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', stream: true, messages: [{ role: 'user', content: 'recover my stream' }] }),
    });
    const text = await res.text();
    expect(res.status, text).to.equal(200);
    const events = parseSse(text);
    expect(events[events.length - 1].data).to.equal('[DONE]');
    const chunks = events.slice(0, -1).map((e) => e.data);
    for (const c of chunks) expect(c.object).to.equal('chat.completion.chunk');
    const content = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    expect(content).to.not.equal('');
    expect(chunks.some((c) => c.choices[0]?.finish_reason === 'stop'), 'the last chunk is there').to.equal(true);
    const id = res.headers.get('x-service-request-id')!;
    expect(await job(id), 'the completed job is gone (removeOnComplete)').to.equal(undefined);
    expect(await keptCopy(id), 'the kept copy holds the chunks').to.include('chat.completion.chunk');
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: id } }), 'the held usage billed once').to.equal(1);
  });
});
