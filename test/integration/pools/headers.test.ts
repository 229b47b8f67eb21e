import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { keyHeader } from '../../helpers/http';

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
});
