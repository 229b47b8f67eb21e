import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { multipartBody, postAudio, transcriptionParts } from '../../helpers/multipart';
import { makeWav } from '../../helpers/wav';
import { expectErrorEnvelope } from '../../helpers/errors';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent, RoutingPlan } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';

/**
 * Model ids that name members of Object.prototype are unknown models like any other, on every task
 * route, with and without a routing plan: an alias lookup on a plain object must not find
 * `Object.prototype.constructor` and crash on it (500 internal_error).
 */
describe('model ids named like Object.prototype members', () => {
  let o: TestOrg;
  let planId: string;
  const wav = makeWav([{ seconds: 0.5, toneHz: 440 }]);
  before(async () => {
    o = await buildOrg(env().redis, { policies: { systemone: 'included' } });
    const plan = await RoutingPlan.create({ orgId: o.org.id, name: 'proto-plan', modelMap: { fast: 'sim-chat' }, projectId: null } as never);
    planId = plan.id;
    await bumpEpoch(env().redis);
  });
  beforeEach(() => {
    env().sim.log.entries.length = 0;
  });

  const routes: Array<[string, (m: string, base: string, h: Record<string, string>) => Promise<Reply>, number, string]> = [
    ['chat', (m, b, h) => call('POST', `${b}/v1/chat/completions`, { headers: h, json: { model: m, messages: [{ role: 'user', content: 'hi' }] } }), 404, 'model_not_found'],
    ['embeddings', (m, b, h) => call('POST', `${b}/v1/embeddings`, { headers: h, json: { model: m, input: 'x' } }), 404, 'model_not_found'],
    ['rerank', (m, b, h) => call('POST', `${b}/v1/rerank`, { headers: h, json: { model: m, query: 'q', documents: ['a'] } }), 404, 'model_not_found'],
    ['images', (m, b, h) => call('POST', `${b}/v1/images/generations`, { headers: h, json: { model: m, prompt: 'p' } }), 404, 'model_not_found'],
    ['systemone', (m, b, h) => call('POST', `${b}/v1/systemone`, { headers: h, json: { model: m, state: 's', questions: { a: { type: 'noul', instructions: 'i' } } } }), 404, 'model_not_found'],
    ['audio', async (m, b, h) => {
      const r = await postAudio(`${b}/v1/audio/transcriptions`, h, multipartBody(transcriptionParts(wav, [], m)));
      return { status: r.status, headers: r.headers, body: r.body, text: r.text };
    }, 400, 'invalid_request'],
  ];
  for (const [route, send, status, code] of routes) {
    it(`${route}: constructor, __proto__, toString, hasOwnProperty are ${status} ${code}, with and without a routing plan`, async () => {
      for (const base of ['', `/r/PLAN`]) {
        for (const m of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
          const r = await send(m, base.replace('PLAN', planId), keyHeader(o.key));
          expect(r.status, `${base || '/'} ${m}: ${r.text}`).to.equal(status);
          expectErrorEnvelope(r.text, code);
          const requestId = r.headers.get('x-service-request-id');
          expect(requestId).to.be.a('string').and.match(/^req_/);
          await usageSettled();
          expect(await UsageEvent.count({ where: { requestId: requestId! } })).to.equal(0);
        }
      }
      expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    });
  }

  it('a routing-plan alias still resolves', async () => {
    const r = await call('POST', `/r/${planId}/v1/chat/completions`, { headers: keyHeader(o.key), json: { model: 'fast', messages: [{ role: 'user', content: 'hi' }] } });
    expect(r.status, r.text).to.equal(200);
  });
});
