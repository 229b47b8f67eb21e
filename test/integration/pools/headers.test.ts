import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { poolModel, rndId, simDeployment } from '../../helpers/pool-models';
import { ScriptedUpstream } from '../../helpers/scripted-upstream';
import { upsertProvider } from '../../../shared/catalog/catalog-ops';
import { QueryTypes } from 'sequelize';
import { db } from '../../../shared/db/sequelize';
import { usageSettled } from '../../helpers/usage';

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

    // A stream whose event is `null` makes the OpenAI adapter throw a TypeError (not an ApiError):
    // a retryable failure of class `other`, answered 502 once the attempts are spent.
    it('answers with the route headers it had: deployment, attempts and fallback model', async () => {
      const provider = `scripted-${rndId()}`;
      await upsertProvider({ name: provider, kind: 'openai', base_url: `${up.url}/v1` } as never);
      const fallback = await poolModel([{ name: 'odd', provider, upstream: 'up-model' }]);
      const down = simDeployment('down');
      const model = await poolModel([down], { fallbacks: [fallback] });
      env().sim.knobs.set(down.upstream, { status: 503 });
      up.reset();
      up.next = Array.from({ length: 3 }, () => ({ kind: 'sse' as const, events: ['null'] }));
      const r = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, stream: true, messages: [{ role: 'user', content: 'hi' }] } });
      expect(r.status, r.text).to.equal(502);
      expect(r.body.error.code).to.equal('upstream_error');
      expect(r.headers.get('x-service-fallback-model')).to.equal(fallback);
      expect(r.headers.get('x-service-deployment')).to.equal('odd');
      expect(r.headers.get('x-service-attempts')).to.equal('3');
      expect(up.received).to.have.length(2);
      await usageSettled();
      const rows = await db().query<{ deployment: string | null; attempts: number }>('SELECT deployment, attempts FROM request_logs WHERE request_id = :id', { type: QueryTypes.SELECT, replacements: { id: r.headers.get('x-service-request-id') } });
      expect(rows.map((x) => [x.deployment, x.attempts]), 'the failed request’s log row names them too').to.deep.equal([['odd', 3]]);
    });
  });
});
