import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { poolsWithSettings } from '../../helpers/pools';
import { UsageEvent } from '../../../shared/db/models';
import { completedIn } from '../../helpers/completed-jobs';

const requestId = (r: Reply) => r.headers.get('x-service-request-id')!;

describe('the embeddings queue in two shards (QUEUE_SHARDS_EMBEDDINGS=2) on one Redis', () => {
  poolsWithSettings({ QUEUE_SHARDS_EMBEDDINGS: '2' });
  beforeEach(resetSim);

  it('spreads embeddings and rerank jobs over both shards, answers each and bills each once', async () => {
    const o = await buildOrg(env().redis);
    const shards = env().gw.ctx.queues.shards('embeddings');
    expect(shards.map((q) => q.name)).to.deep.equal(['embeddings', 'embeddings-1']);
    const replies: Reply[] = [];
    const per = new Map<string, number>();
    for (let i = 0; i < 40 && !(per.size === 2 && Math.min(...per.values()) >= 2); i++) {
      const r = i % 2
        ? await call('POST', '/v1/rerank', { headers: keyHeader(o.key), json: { model: 'sim-rerank', query: 'q', documents: ['a', `b ${i}`] } })
        : await call('POST', '/v1/embeddings', { headers: keyHeader(o.key), json: { model: 'sim-embed', input: `shard ${i}` } });
      expect(r.status, r.text).to.equal(200);
      expect(r.body.data ?? r.body.results, r.text).to.be.an('array').that.is.not.empty;
      replies.push(r);
      // a completed job is removed at once: where it ran is read from its queue's `completed` event
      const on = await completedIn(env().redis, shards, requestId(r));
      expect(on, `shard of ${requestId(r)}`).to.be.a('string');
      per.set(on!, (per.get(on!) ?? 0) + 1);
    }
    expect([...per.keys()].sort(), JSON.stringify([...per])).to.deep.equal(['embeddings', 'embeddings-1']);
    await usageSettled();
    expect((await UsageEvent.findAll({ where: { orgId: o.org.id } })).map((e) => e.requestId).sort()).to.deep.equal(replies.map(requestId).sort());
  });
});
