import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';
import { upsertModel, upsertProvider } from '../../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { ScriptedUpstream, chunk, completion, dropScriptedModel, usageChunk, type Reply } from '../../helpers/scripted-upstream';

const BODY = 'The upstream answered with a malformed body.';
const EVENT = 'The upstream sent a malformed stream event.';
const json = (body: unknown): Reply => ({ kind: 'json', body });
const sse = (...events: unknown[]): Reply => ({ kind: 'sse', events });

/** One answer that is valid JSON but not of the shape the upstream's API documents, and what the caller gets for it. */
interface Case {
  name: string;
  path: string;
  body: Record<string, unknown>;
  reply: Reply;
  message: string;
}

/**
 * Sends each case through the gateway with the upstream answering it to every attempt: 502
 * `upstream_error` with the adapter's malformed-answer message (never the worker's generic one for
 * a TypeError), nothing billed; then a well-formed answer on the same model is served (200).
 */
async function refusesEach(o: TestOrg, up: ScriptedUpstream, cases: Case[], good: { path: string; body: Record<string, unknown>; reply: Reply }): Promise<void> {
  await usageSettled();
  const before = await UsageEvent.count({ where: { orgId: o.org.id } });
  for (const c of cases) {
    up.reset();
    up.otherwise = () => c.reply;
    const r = await call('POST', c.path, { headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' }, json: c.body });
    expect(r.status, `${c.name}: ${r.text}`).to.equal(502);
    expect(r.body.error.code, c.name).to.equal('upstream_error');
    expect(r.body.error.message, c.name).to.equal(c.message);
    expect(up.received.length, `${c.name}: the upstream was called`).to.be.greaterThan(0);
  }
  up.reset();
  up.otherwise = () => good.reply;
  const ok = await call('POST', good.path, { headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' }, json: good.body });
  expect(ok.status, `the worker still serves: ${ok.text}`).to.equal(200);
  await usageSettled();
  expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'only the well-formed answer was billed').to.equal(before + 1);
}

describe('providers: an upstream answer that is valid JSON of the wrong shape is refused as malformed', () => {
  let o: TestOrg;
  before(async () => {
    o = await buildOrg(env().redis);
  });

  describe('OpenAI adapter', () => {
    let up: ScriptedUpstream;
    let model: string;
    before(async () => {
      up = await ScriptedUpstream.start('openai');
      model = await up.model();
    });
    after(() => up.close());

    it('JSON bodies and streamed events: 502 upstream_error with the malformed-answer message, nothing billed, the worker serves on', async function () {
      this.timeout(30_000);
      const chat = { model, messages: [{ role: 'user', content: 'hi' }] };
      const cases: Case[] = [
        { name: 'JSON null', path: '/v1/chat/completions', body: chat, reply: json(null), message: BODY },
        { name: 'JSON 5', path: '/v1/chat/completions', body: chat, reply: json(5), message: BODY },
        { name: 'a choice that is null', path: '/v1/chat/completions', body: chat, reply: json({ ...completion({ content: 'x' }, 'stop'), choices: [null] }), message: BODY },
        { name: 'a choice that is a number', path: '/v1/responses', body: { model, input: 'hi' }, reply: json({ ...completion({ content: 'x' }, 'stop'), choices: [5] }), message: BODY },
        { name: 'a choice without its message', path: '/v1/messages', body: { model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }, reply: json({ ...completion({ content: 'x' }, 'stop'), choices: [{ index: 0, finish_reason: 'stop' }] }), message: BODY },
        { name: 'a tool call that is null', path: '/v1/chat/completions', body: chat, reply: json(completion({ content: null, tool_calls: [null] }, 'tool_calls')), message: BODY },
        { name: 'usage that is a string', path: '/v1/chat/completions', body: chat, reply: json(completion({ content: 'x' }, 'stop', 'lots' as never)), message: BODY },
        { name: 'legacy completions: a choice that is null', path: '/v1/completions', body: { model, prompt: 'hi' }, reply: json({ id: 'cmpl-s', object: 'text_completion', choices: [null] }), message: BODY },
        { name: 'data: null', path: '/v1/chat/completions', body: { ...chat, stream: true }, reply: sse('null'), message: EVENT },
        { name: 'data: 5', path: '/v1/chat/completions', body: { ...chat, stream: true }, reply: sse('5'), message: EVENT },
        { name: 'data: []', path: '/v1/responses', body: { model, input: 'hi', stream: true }, reply: sse('[]'), message: EVENT },
        { name: 'a streamed choice that is null', path: '/v1/chat/completions', body: { ...chat, stream: true }, reply: sse({ id: 'c', choices: [null] }), message: EVENT },
        { name: 'a delta that is a string', path: '/v1/messages', body: { model, max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] }, reply: sse({ id: 'c', choices: [{ index: 0, delta: 'x' }] }), message: EVENT },
        { name: 'choices that are an object', path: '/v1/chat/completions', body: { ...chat, stream: true }, reply: sse({ id: 'c', choices: { 0: {} } }), message: EVENT },
      ];
      await refusesEach(o, up, cases, { path: '/v1/chat/completions', body: { ...chat, stream: true }, reply: sse(chunk({ role: 'assistant', content: 'ok' }), chunk({}, 'stop'), usageChunk()) });
    });
  });

  describe('Anthropic adapter', () => {
    let up: ScriptedUpstream;
    let model: string;
    before(async () => {
      up = await ScriptedUpstream.start('anthropic');
      model = await up.model();
    });
    after(() => up.close());

    it('JSON bodies and streamed events, translated and native: 502 upstream_error with the malformed-answer message, nothing billed, the worker serves on', async function () {
      this.timeout(30_000);
      const chat = { model, messages: [{ role: 'user', content: 'hi' }] };
      const native = { model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };
      const message = (content: unknown[]) => ({ id: 'msg_s', type: 'message', role: 'assistant', model: 'up-model', content, stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 3, output_tokens: 2 } });
      const start = { type: 'message_start', message: { ...message([]), usage: { input_tokens: 3, output_tokens: 0 } } };
      const cases: Case[] = [
        { name: 'JSON null', path: '/v1/chat/completions', body: chat, reply: json(null), message: BODY },
        { name: 'a content block that is null', path: '/v1/chat/completions', body: chat, reply: json(message([null])), message: BODY },
        { name: 'a content block that is a number (native)', path: '/v1/messages', body: native, reply: json(message([5])), message: BODY },
        { name: 'a content block without a type', path: '/v1/responses', body: { model, input: 'hi' }, reply: json(message([{ text: 'x' }])), message: BODY },
        { name: 'legacy completions: content that is an object', path: '/v1/completions', body: { model, prompt: 'hi' }, reply: json({ ...message([]), content: { text: 'x' } }), message: BODY },
        { name: 'data: null', path: '/v1/chat/completions', body: { ...chat, stream: true }, reply: sse('null'), message: EVENT },
        { name: 'message_start without its message', path: '/v1/chat/completions', body: { ...chat, stream: true }, reply: sse({ type: 'message_start' }), message: EVENT },
        { name: 'message_start without its message (native)', path: '/v1/messages', body: { ...native, stream: true }, reply: sse({ type: 'message_start' }), message: EVENT },
        { name: 'content_block_delta without its delta', path: '/v1/chat/completions', body: { ...chat, stream: true }, reply: sse({ type: 'content_block_delta', index: 0 }), message: EVENT },
        { name: 'content_block_start whose block is null', path: '/v1/responses', body: { model, input: 'hi', stream: true }, reply: sse({ type: 'content_block_start', index: 0, content_block: null }), message: EVENT },
        { name: 'message_delta without its delta', path: '/v1/chat/completions', body: { ...chat, stream: true }, reply: sse({ type: 'message_delta', usage: { output_tokens: 1 } }), message: EVENT },
        { name: 'an event without a type (native)', path: '/v1/messages', body: { ...native, stream: true }, reply: sse('{"index":0}'), message: EVENT },
      ];
      const good = sse(
        start,
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ok' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } },
        { type: 'message_stop' },
      );
      await refusesEach(o, up, cases, { path: '/v1/chat/completions', body: { ...chat, stream: true }, reply: good });
    });
  });

  describe('Gemini adapter', () => {
    let up: ScriptedUpstream;
    const model = `scripted-gemini-${Date.now().toString(36)}`;
    before(async () => {
      up = await ScriptedUpstream.start('openai'); // JSON answers and `data:` events, as Gemini frames them (no [DONE])
      await upsertProvider({ name: model, kind: 'gemini', base_url: up.url, api_key: 'gm-scripted' } as never);
      await upsertModel({ id: model, provider: model, upstream: 'up-model', capabilities: { chat: true, tools: true }, prices: { input_token: 1, output_token: 1 } } as never);
      await bumpEpoch(env().redis);
    });
    after(async () => {
      await up.close();
      await dropScriptedModel(model);
    });

    it('JSON bodies and streamed events: 502 upstream_error with the malformed-answer message, nothing billed, the worker serves on', async function () {
      this.timeout(30_000);
      const chat = { model, messages: [{ role: 'user', content: 'hi' }] };
      // Gemini's streams end without `[DONE]`
      const sse = (...events: unknown[]): Reply => ({ kind: 'sse', events, done: false });
      const usageMetadata = { promptTokenCount: 3, candidatesTokenCount: 2 };
      const cases: Case[] = [
        { name: 'a candidate that is null', path: '/v1/chat/completions', body: chat, reply: json({ candidates: [null], usageMetadata }), message: BODY },
        { name: 'a part that is null', path: '/v1/chat/completions', body: chat, reply: json({ candidates: [{ content: { parts: [null] }, finishReason: 'STOP' }], usageMetadata }), message: BODY },
        { name: 'parts that are a number', path: '/v1/chat/completions', body: chat, reply: json({ candidates: [{ content: { parts: 5 }, finishReason: 'STOP' }], usageMetadata }), message: BODY },
        { name: 'a streamed part that is null', path: '/v1/chat/completions', body: { ...chat, stream: true }, reply: sse({ candidates: [{ content: { parts: [null] }, finishReason: 'STOP' }] }), message: EVENT },
        { name: 'data: 5', path: '/v1/chat/completions', body: { ...chat, stream: true }, reply: sse('5'), message: EVENT },
      ];
      await refusesEach(o, up, cases, { path: '/v1/chat/completions', body: chat, reply: json({ candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP' }], usageMetadata }) });
    });
  });
});
