import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';
import { expectRefused } from './helpers';

/** Decision ids answer only on /v1/systemone; every other task route refuses them, billing nothing. */
describe('decision model ids on other routes', () => {
  let o: TestOrg;
  before(async () => {
    o = await buildOrg(env().redis);
  });
  beforeEach(() => {
    env().sim.log.entries.length = 0;
  });

  // chat completions answers OpenAI's 404 for a model that is not a chat model (docs/api.md)
  const cases: Array<{ path: string; body: Record<string, unknown>; code: string; headers?: Record<string, string>; status?: number }> = [
    { path: '/v1/chat/completions', body: { model: 'sim-decide', messages: [{ role: 'user', content: 'hi' }] }, code: 'model_not_chat_capable', status: 404 },
    { path: '/v1/completions', body: { model: 'sim-decide', prompt: 'hi' }, code: 'model_not_chat_capable' },
    { path: '/v1/messages', body: { model: 'sim-decide', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }, code: 'model_not_chat_capable', headers: { 'anthropic-version': '2023-06-01' } },
    { path: '/v1/responses', body: { model: 'sim-decide', input: 'hi' }, code: 'model_not_chat_capable' },
    { path: '/v1/embeddings', body: { model: 'sim-decide', input: 'hello' }, code: 'model_not_embedding_capable' },
    { path: '/v1/rerank', body: { model: 'sim-decide', query: 'q', documents: ['a'] }, code: 'model_not_rerank_capable' },
    { path: '/v1/images/generations', body: { model: 'sim-decide', prompt: 'a cat' }, code: 'model_not_image_capable' },
  ];
  for (const c of cases) {
    it(`${c.path} refuses a decision model id with ${c.status ?? 400} ${c.code}`, async () => {
      const r = await call('POST', c.path, { headers: { ...keyHeader(o.key), ...c.headers }, json: c.body });
      expect(r.status, r.text).to.equal(c.status ?? 400);
      expect(r.body.error.code).to.equal(c.code);
      expect(r.text).not.to.match(/\bat .+\.(js|ts):\d+/);
      expect(env().sim.log.entries).to.have.length(0);
      const requestId = r.headers.get('x-service-request-id');
      expect(requestId, 'x-service-request-id').to.be.a('string').and.match(/^req_/);
      await usageSettled();
      expect(await UsageEvent.count({ where: { requestId: requestId! } })).to.equal(0);
    });
  }

  it('/v1/systemone refuses an embeddings model id as systemone_invalid_request', async () => {
    const r = await call('POST', '/v1/systemone', {
      headers: keyHeader(o.key),
      json: { model: 'sim-embed', state: 's', questions: { q: { type: 'noul', instructions: 'i' } } },
    });
    await expectRefused(r, 400, 'systemone_invalid_request');
    expect(env().sim.log.entries).to.have.length(0);
  });
});
