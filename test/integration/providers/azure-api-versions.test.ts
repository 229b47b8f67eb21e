import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { ScriptedUpstream, completion } from '../../helpers/scripted-upstream';

/**
 * Azure's dated API versions before 2024-09-01 answer 400 "Unrecognized request argument supplied:
 * max_completion_tokens" (openai/openai-python#1724, Azure's answer there); the messages and Responses
 * dialects ask for the output cap as max_completion_tokens, so on such a deployment it goes as
 * max_tokens. Later versions, v1 and preview get max_completion_tokens as the caller's dialect gives it.
 */
describe('Azure OpenAI: the output cap by API version', () => {
  let o: TestOrg;
  const up = new ScriptedUpstream('azure');
  const models: Record<string, string> = {};
  const answer = completion({ role: 'assistant', content: 'ok' }, 'stop');
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    await up.start();
    up.otherwise = () => ({ kind: 'json', body: answer });
    for (const v of ['2024-06-01', '2024-08-01-preview', '2024-09-01-preview', '2024-10-21', 'v1']) models[v] = await up.model({ settings: { api_version: v } });
  });
  after(() => up.close());

  const sent = () => up.received.at(-1)!.body as Record<string, unknown>;

  for (const [version, old] of [['2024-06-01', true], ['2024-08-01-preview', true], ['2024-09-01-preview', false], ['2024-10-21', false], ['v1', false]] as const) {
    it(`${version}: a messages request's max_tokens goes as ${old ? 'max_tokens' : 'max_completion_tokens'}, and the answer is 200`, async () => {
      up.reset();
      const r = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' }, json: { model: models[version], max_tokens: 77, messages: [{ role: 'user', content: 'hi' }] } });
      expect(r.status, r.text).to.equal(200);
      expect(up.received).to.have.length(1);
      if (old) {
        expect(sent().max_tokens).to.equal(77);
        expect(sent()).to.not.have.property('max_completion_tokens');
      } else {
        expect(sent().max_completion_tokens).to.equal(77);
        expect(sent()).to.not.have.property('max_tokens');
      }
    });
  }

  it('a stream on 2024-06-01 goes without stream_options, which that version refuses, and is billed by the estimate the caller sees as usage; 2024-10-21 gets stream_options', async () => {
    const chunk = (delta: object, finish: string | null) => ({ id: 'chatcmpl-az', object: 'chat.completion.chunk', created: 1, model: 'up-model', choices: [{ index: 0, delta, finish_reason: finish }] });
    up.otherwise = (req) => (req.body?.stream ? { kind: 'sse', events: [chunk({ role: 'assistant', content: 'hello there' }, null), chunk({}, 'stop')] } : { kind: 'json', body: answer });
    try {
      for (const [version, sent] of [['2024-06-01', false], ['2024-08-01-preview', false], ['2024-10-21', true], ['v1', true]] as const) {
        up.reset();
        const s = await postSse('/v1/chat/completions', keyHeader(o.key), { model: models[version], stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
        expect(s.status, s.text).to.equal(200);
        const body = up.received.at(-1)!.body as Record<string, unknown>;
        if (sent) expect(body.stream_options, version).to.deep.equal({ include_usage: true });
        else expect(body, version).to.not.have.property('stream_options');
        const usage = s.events.slice(0, -1).map((e) => e.data).find((c) => c.usage)?.usage;
        expect(usage?.completion_tokens, `${version}: the usage chunk (estimated when Azure sent none)`).to.be.greaterThan(0);
      }
    } finally {
      up.otherwise = () => ({ kind: 'json', body: answer });
    }
  });

  it('2024-06-01: a chat request with max_completion_tokens goes as max_tokens; one with both is OpenAI\'s 400 invalid_parameter_combination, nothing sent', async () => {
    up.reset();
    const one = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: models['2024-06-01'], max_completion_tokens: 33, messages: [{ role: 'user', content: 'hi' }] } });
    expect(one.status, one.text).to.equal(200);
    expect(sent().max_tokens).to.equal(33);
    expect(sent()).to.not.have.property('max_completion_tokens');
    const both = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: models['2024-06-01'], max_tokens: 12, max_completion_tokens: 33, messages: [{ role: 'user', content: 'hi' }] } });
    expect(both.status, both.text).to.equal(400);
    expect(both.body.error).to.include({ code: 'invalid_parameter_combination', param: 'max_tokens' });
    expect(sent().max_tokens, 'the one before it was the last sent').to.equal(33);
  });
});
