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

  const job = (id: string) => Job.fromId(env().gw.ctx.queues.get('chat-interactive') as never, id);

  it('JSON chat: 200 with the answer, the job stores none, billed once', async () => {
    const r = await call('POST', '/v1/chat/completions', { base: pod.url, headers: keyHeader(o.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'recover me' }] } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.object).to.equal('chat.completion');
    expect(r.body.model).to.equal('sim-chat');
    expect(r.body.choices[0].message.content).to.be.a('string').and.not.equal('');
    const id = r.headers.get('x-service-request-id')!;
    const stored = (await job(id))!;
    expect(await stored.getState()).to.equal('completed');
    expect(JSON.stringify(stored.returnvalue ?? {}), "the job's return value does not carry the answer").not.to.include(r.body.choices[0].message.content);
    const kept = await env().redis.get(keys.replyResult((stored.data as { replyTo: string }).replyTo, id));
    expect(kept, 'the kept copy holds it').to.include(r.body.choices[0].message.content);
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
    expect(JSON.stringify((await job(id))!.returnvalue ?? {}), "the job's return value does not carry the chunks").not.to.include('chat.completion.chunk');
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: id } }), 'the held usage billed once').to.equal(1);
  });
});
