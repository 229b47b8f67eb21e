import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { poolModel, rndId, simDeployment } from '../../helpers/pool-models';
import { ScriptedUpstream, chunk } from '../../helpers/scripted-upstream';
import { upsertProvider } from '../../../shared/catalog/catalog-ops';
import { QueryTypes } from 'sequelize';
import { db } from '../../../shared/db/sequelize';
import { usageSettled } from '../../helpers/usage';
import { encrypt } from '../../../shared/crypto';
import { Provider } from '../../../shared/db/models';

/** Every chat-style dialect, JSON and streamed, on a pool of one (OpenAI-kind) and the Anthropic-native bypass. */
const CASES: Array<{ name: string; path: string; body: Record<string, unknown>; deployment: string; anthropic?: boolean }> = [
  { name: 'chat', path: '/v1/chat/completions', body: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] }, deployment: 'simulator' },
  { name: 'completions', path: '/v1/completions', body: { model: 'sim-chat', prompt: 'hi' }, deployment: 'simulator' },
  { name: 'messages (translated)', path: '/v1/messages', body: { model: 'sim-chat', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }, deployment: 'simulator', anthropic: true },
  { name: 'messages (native bypass)', path: '/v1/messages', body: { model: 'sim-claude', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }, deployment: 'simulator-anthropic', anthropic: true },
  { name: 'responses', path: '/v1/responses', body: { model: 'sim-chat', input: 'hi' }, deployment: 'simulator' },
];

describe('model pools: x-service-deployment and x-service-attempts on every chat-style response', () => {
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
  });

  for (const c of CASES) {
    for (const stream of [false, true]) {
      it(`${c.name}, ${stream ? 'streamed' : 'JSON'}`, async () => {
        const res = await fetch(`${env().gw.url}${c.path}`, {
          method: 'POST',
          headers: { ...keyHeader(o.key), 'content-type': 'application/json', ...(c.anthropic ? { 'anthropic-version': '2023-06-01' } : {}) },
          body: JSON.stringify({ ...c.body, ...(stream ? { stream: true } : {}) }),
        });
        const text = await res.text();
        expect(res.status, text).to.equal(200);
        expect(res.headers.get('content-type')).to.include(stream ? 'text/event-stream' : 'application/json');
        expect(res.headers.get('x-service-deployment')).to.equal(c.deployment);
        expect(res.headers.get('x-service-attempts')).to.equal('1');
        expect(res.headers.get('x-service-fallback-model')).to.equal(null);
        expect(text, 'the route metadata never leaks into the body').not.to.match(/__route|\\u0000route/);
      });
    }
  }

  describe('on a failure that is not an ApiError', () => {
    const up = new ScriptedUpstream();
    before(() => up.start());
    after(() => up.close());

    // The fallback's stored platform credential cannot be opened (sealed under another SECRET_KEY, as
    // after a key rotation): decrypting it throws a plain Error (not an ApiError) inside the attempt,
    // where an adapter's failure would come from; a retryable failure of class `other`, answered 502
    // once the attempts are spent. (Upstream answers of the wrong shape, the way this test used to get
    // such a failure, are refused as ApiErrors now: providers/malformed-answers.)
    it('answers with the route headers it had: deployment, attempts and fallback model', async () => {
      const provider = `scripted-${rndId()}`;
      await upsertProvider({ name: provider, kind: 'openai', base_url: `${up.url}/v1`, api_key: 'sk-scripted' } as never);
      const sealed = encrypt('sk-scripted').split('.');
      sealed[2] = encrypt('sk-other').split('.')[2]; // another authentication tag: the key does not open it
      await Provider.update({ apiKeyEncrypted: sealed.join('.') }, { where: { name: provider } });
      const fallback = await poolModel([{ name: 'odd', provider, upstream: 'up-model' }]);
      const down = simDeployment('down');
      const model = await poolModel([down], { fallbacks: [fallback] });
      env().sim.knobs.set(down.upstream, { status: 503 });
      up.reset();
      up.otherwise = () => ({ kind: 'sse', events: [chunk({ role: 'assistant', content: 'never sent' }, 'stop')] });
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, stream: true, messages: [{ role: 'user', content: 'hi' }] } });
      expect(r.status, r.text).to.equal(502);
      expect(r.body.error.code).to.equal('upstream_error');
      expect(r.body.error.message, 'the worker’s answer for an error that is not an ApiError').to.equal('The request failed in the worker.');
      expect(r.headers.get('x-service-fallback-model')).to.equal(fallback);
      expect(r.headers.get('x-service-deployment')).to.equal('odd');
      expect(r.headers.get('x-service-attempts')).to.equal('3');
      expect(up.received, 'the failure came before any upstream call').to.have.length(0);
      await usageSettled();
      const rows = await db().query<{ deployment: string | null; attempts: number }>('SELECT deployment, attempts FROM request_logs WHERE request_id = :id', { type: QueryTypes.SELECT, replacements: { id: r.headers.get('x-service-request-id') } });
      expect(rows.map((x) => [x.deployment, x.attempts]), 'the failed request’s log row names them too (the fallback model before its deployment, as on a usage event)').to.deep.equal([[`${fallback}/odd`, 3]]);
    });
  });
});
