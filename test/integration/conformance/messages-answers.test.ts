import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { sdkFinalMessage } from '../../helpers/sdk-streams';
import { expectAnthropic } from '../../helpers/conformance';

/**
 * The messages dialect's answers against the schemas written from the Anthropic SDK's types
 * (test/fixtures/vendor/anthropic), on the native bypass (`sim-claude`) and the translated path
 * (`sim-chat`).
 */
const lookup = { name: 'lookup', description: 'Look something up', input_schema: { type: 'object', properties: { query: { type: 'string' } } } };

describe('conformance: messages dialect answers against the Anthropic SDK types', () => {
  let h: Record<string, string>;
  before(async () => {
    const o = await buildOrg(env().redis);
    h = { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' };
  });
  beforeEach(resetSim);

  for (const model of ['sim-claude', 'sim-chat']) {
    it(`${model}: a Message (text, tool_use) and count_tokens' MessageTokensCount`, async () => {
      const text = await call('POST', '/v1/messages', { headers: h, json: { model, max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: 'hello there' }] } });
      expect(text.status, text.text).to.equal(200);
      expectAnthropic('Message', text.body);
      expect(text.body.model).to.equal(model);
      const tool = await call('POST', '/v1/messages', { headers: h, json: { model, max_tokens: 64, tools: [lookup], messages: [{ role: 'user', content: 'use the tool please' }] } });
      expect(tool.status, tool.text).to.equal(200);
      expect(tool.body.stop_reason).to.equal('tool_use');
      expectAnthropic('Message', tool.body);
      const count = await call('POST', '/v1/messages/count_tokens', { headers: h, json: { model, messages: [{ role: 'user', content: 'hello there' }] } });
      expect(count.status, count.text).to.equal(200);
      expectAnthropic('MessageTokensCount', count.body);
    });

    it(`${model}: every stream event (text and tool use) is a RawMessageStreamEvent or ping, named by its type`, async () => {
      for (const prompt of ['hello stream', 'use the tool now']) {
        const s = await postSse('/v1/messages', h, { model, max_tokens: 64, stream: true, tools: [lookup], messages: [{ role: 'user', content: prompt }] });
        expect(s.status, s.text).to.equal(200);
        const types = s.events.map((e) => e.data.type);
        expect(types[0]).to.equal('message_start');
        expect(types.at(-1)).to.equal('message_stop');
        expect(types).to.include.members(['content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta']);
        for (const e of s.events) {
          expect(e.event).to.equal(e.data.type);
          expectAnthropic('StreamEvent', e.data);
        }
        // and the SDK's MessageStream accumulates them into the Message
        expect((await sdkFinalMessage(s.events.map((e) => e.data))).stop_reason).to.equal(prompt.startsWith('use') ? 'tool_use' : 'end_turn');
      }
    });
  }

  it('sim-claude: thinking blocks (JSON and streamed, with thinking_delta) conform', async () => {
    const json = { model: 'sim-claude', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'think first' }] };
    const r = await call('POST', '/v1/messages', { headers: h, json });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.content[0].type).to.equal('thinking');
    expectAnthropic('Message', r.body);
    const s = await postSse('/v1/messages', h, { ...json, stream: true });
    expect(s.events.some((e) => e.data.delta?.type === 'thinking_delta')).to.equal(true);
    for (const e of s.events) expectAnthropic('StreamEvent', e.data);
    expect((await sdkFinalMessage(s.events.map((e) => e.data))).content[0].type).to.equal('thinking');
  });
});
