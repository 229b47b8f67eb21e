import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { scriptedTranslated } from '../../helpers/sdk-clients';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { expectAnthropic } from '../../helpers/conformance';
import { ScriptedUpstream, byStream, chunk, completion, usageChunk } from '../../helpers/scripted-upstream';

/**
 * The fields Anthropic's API sends on every Message whether or not they apply, which the gateway left
 * out (but for a refusal's stop_details). SDK 1.17 types them required-nullable (`Message.container`,
 * `diagnostics`, `stop_details`; `Usage.inference_geo`, `output_tokens_details`, `server_tool_use`,
 * `speed`; `RawMessageDeltaEvent.Delta.container`, `stop_details`; `MessageDeltaUsage.output_tokens_details`,
 * `server_tool_use`), and api.anthropic.com's answers carry `"container":null,...,"stop_details":null`
 * and `"inference_geo"` in usage (JSON and message_start), `"diagnostics":null` on message_start, and
 * `"stop_details":null` on every message_delta. Without message_delta's `stop_details` the SDK's
 * accumulated stream (lib/MessageStream.js: `snapshot.stop_details = event.delta.stop_details`)
 * answered a Message whose `stop_details` was undefined.
 *
 * An Anthropic-native upstream's own values go through as it sent them (native bypass).
 */
describe('messages dialect: the fields Anthropic always sends', function () {
  this.timeout(30_000);
  const s = scriptedTranslated();
  const headers = () => ({ ...keyHeader(s.key), 'anthropic-version': '2023-06-01' });
  const params = (extra: Record<string, unknown> = {}) => ({ model: s.model, max_tokens: 100, messages: [{ role: 'user' as const, content: 'hi' }], ...extra });

  /** The Message fields that do not apply to a translated answer, as Anthropic sends them then. */
  const NULLS = { container: null, stop_details: null, diagnostics: null };
  /** The gateway's usage fields beside the counts (response.ts messagesUsage). */
  const USAGE = { service_tier: 'standard', inference_geo: 'not_available', output_tokens_details: null, server_tool_use: null, speed: 'standard' };
  const DELTA = { stop_reason: 'end_turn', stop_sequence: null, stop_details: null, container: null };

  const script = () => {
    s.up.otherwise = byStream(completion({ content: 'Fine.' }, 'stop'), [chunk({ role: 'assistant', content: 'Fine.' }), chunk({}, 'stop'), usageChunk()]);
  };

  for (const [name, extra, serverTools] of [
    ['a translated answer', {}, null],
    ["the gateway's web search loop", { tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, { web_search_requests: 0, web_fetch_requests: 0 }],
  ] as const) {
    it(`${name}: JSON, message_start's message, message_delta and the SDK's accumulated stream`, async () => {
      script();
      const json = await call('POST', '/v1/messages', { headers: headers(), json: params(extra) });
      expect(json.status, json.text).to.equal(200);
      expect(json.body).to.deep.include(NULLS);
      expect(json.body.usage).to.deep.include({ ...USAGE, server_tool_use: serverTools });
      expectAnthropic('Message', json.body);

      const raw = await postSse('/v1/messages', headers(), params({ ...extra, stream: true }));
      for (const e of raw.events) expectAnthropic('StreamEvent', e.data);
      const start = raw.events.find((e) => e.event === 'message_start')!.data.message;
      expect(start).to.deep.include({ ...NULLS, stop_reason: null, stop_sequence: null });
      expect(start.usage).to.deep.include(USAGE);
      const delta = raw.events.find((e) => e.event === 'message_delta')!.data;
      expect(delta.delta).to.deep.equal(DELTA);
      expect(delta.usage).to.deep.include({ output_tokens_details: null, server_tool_use: serverTools });

      const final = await s.anthropic.messages.stream(params(extra) as Anthropic.MessageCreateParams).finalMessage();
      expect(final).to.deep.include(NULLS);
      expect(final.usage).to.deep.include({ ...USAGE, server_tool_use: serverTools });
    });
  }

  it("an Anthropic-native upstream's own values pass unchanged, JSON and streamed (native bypass)", async () => {
    const claude = await ScriptedUpstream.start('anthropic');
    try {
      const native = await claude.model();
      const usage = { input_tokens: 9, output_tokens: 2, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }, service_tier: 'priority', inference_geo: 'us', output_tokens_details: { thinking_tokens: 0 }, server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 }, speed: 'fast' };
      const container = { id: 'container_1', expires_at: '2026-12-05T10:00:00Z', skills: null };
      const diagnostics = { cache_miss_reason: null };
      const message = { id: 'msg_up', type: 'message', role: 'assistant', model: 'up-model', content: [{ type: 'text', text: 'Hi.' }], container, stop_reason: 'end_turn', stop_sequence: null, stop_details: null, usage, diagnostics };
      const delta = { stop_reason: 'end_turn', stop_sequence: null, stop_details: null, container };
      claude.otherwise = byStream(message, [
        { type: 'message_start', message: { ...message, content: [], stop_reason: null } },
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi.' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'message_delta', delta, usage: { output_tokens: 2, server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 } } },
        { type: 'message_stop' },
      ]);
      const json = await call('POST', '/v1/messages', { headers: headers(), json: params({ model: native }) });
      expect(json.status, json.text).to.equal(200);
      expect(json.body).to.deep.equal({ ...message, model: native });
      const raw = await postSse('/v1/messages', headers(), params({ model: native, stream: true }));
      expect(raw.events.find((e) => e.event === 'message_start')!.data.message).to.deep.equal({ ...message, model: native, content: [], stop_reason: null });
      expect(raw.events.find((e) => e.event === 'message_delta')!.data.delta).to.deep.equal(delta);
    } finally {
      await claude.close();
    }
  });
});
