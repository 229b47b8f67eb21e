import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';

/** Decision ids answer only on /v1/systemone; every other task route refuses them, billing nothing. */
describe('decision model ids on other routes', () => {
  let o: TestOrg;
  before(async () => {
    o = await buildOrg(env().redis);
  });
  beforeEach(() => {
    env().sim.log.entries.length = 0;
  });

  const cases: Array<{ path: string; body: Record<string, unknown>; code: string }> = [
    { path: '/v1/chat/completions', body: { model: 'sim-decide', messages: [{ role: 'user', content: 'hi' }] }, code: 'model_not_chat_capable' },
    { path: '/v1/embeddings', body: { model: 'sim-decide', input: 'hello' }, code: 'model_not_embedding_capable' },
    { path: '/v1/rerank', body: { model: 'sim-decide', query: 'q', documents: ['a'] }, code: 'model_not_rerank_capable' },
    { path: '/v1/images/generations', body: { model: 'sim-decide', prompt: 'a cat' }, code: 'model_not_image_capable' },
  ];
  for (const c of cases) {
    it(`${c.path} refuses a decision model id with 400 ${c.code}`, async () => {
      const r = await call('POST', c.path, { headers: keyHeader(o.key), json: c.body });
      expect(r.status, r.text).to.equal(400);
      expect(r.body.error.code).to.equal(c.code);
      expect(env().sim.log.entries).to.have.length(0);
      await usageSettled();
      expect(await UsageEvent.count({ where: { requestId: r.headers.get('x-service-request-id')! } })).to.equal(0);
    });
  }

  it('/v1/systemone refuses an embeddings model id as systemone_invalid_request', async () => {
    const r = await call('POST', '/v1/systemone', {
      headers: keyHeader(o.key),
      json: { model: 'sim-embed', state: 's', questions: { q: { type: 'noul', instructions: 'i' } } },
    });
    expect(r.status, r.text).to.equal(400);
    expect(r.body.error.code).to.equal('systemone_invalid_request');
  });
});
