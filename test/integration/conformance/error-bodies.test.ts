import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { multipartBody, postAudio } from '../../helpers/multipart';
import { expectRejected } from '../embeddings/helpers';
import { expectAnthropic, expectOpenAI, expectResponsesEvent, responsesEventForDocument } from '../../helpers/conformance';

/**
 * Every error body of the dialects against the vendored documents: the spec's `code` and `message`
 * stay, OpenAI's `type` and `param` (ErrorResponse) and Anthropic's `type` (ErrorObject) come with
 * them; nothing is billed for any of them.
 */
const chat = { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] };
const OPENAI_POSTS: Array<[string, Record<string, unknown>]> = [
  ['/v1/chat/completions', chat],
  ['/v1/completions', { model: 'sim-chat', prompt: 'hi' }],
  ['/v1/responses', { model: 'sim-chat', input: 'hi' }],
  ['/v1/embeddings', { model: 'sim-embed', input: 'hi' }],
  ['/v1/images/generations', { model: 'sim-image', prompt: 'a lighthouse' }],
];
const ANTHROPIC = { 'anthropic-version': '2023-06-01' };

async function expectOpenAIError(r: Reply, status: number, code: string, type: string, param: string | null): Promise<void> {
  await expectRejected(r, status, code);
  expectOpenAI('ErrorResponse', r.body);
  expect(r.body.error).to.include({ type, param });
}

async function expectMessagesError(r: Reply, status: number, code: string, type: string): Promise<void> {
  await expectRejected(r, status, code);
  // The spec's plain envelope (docs/dialects.md): Anthropic's ErrorObject is what sits inside `error`.
  expectAnthropic('ErrorObject', r.body.error);
  expect(r.body.error.type).to.equal(type);
}

describe('conformance: error bodies against the vendored documents', () => {
  let o: TestOrg;
  let h: Record<string, string>;
  before(async () => {
    o = await buildOrg(env().redis);
    h = keyHeader(o.key);
  });
  beforeEach(resetSim);

  describe('OpenAI dialects: ErrorResponse with type and param', () => {
    const RESPONSES_POST = /^\/(v1\/)?responses/;
    for (const [path, body] of OPENAI_POSTS) {
      // OpenAI answers a wrong key and an unknown model with type invalid_request_error (codes invalid_api_key, model_not_found);
      // an unknown model is 404 but on the Responses API, whose answer is 400 (responses-model-not-found.test.ts)
      it(`${path}: 401 and ${RESPONSES_POST.test(path) ? 400 : 404} (param model) and 400 invalid_request_error`, async () => {
        await expectOpenAIError(await call('POST', path, { json: body }), 401, 'INVALID_API_KEY', 'invalid_request_error', null);
        await expectOpenAIError(await call('POST', path, { headers: { authorization: 'Bearer svc_nonsense' }, json: body }), 401, 'INVALID_API_KEY', 'invalid_request_error', null);
        const missing = await call('POST', path, { headers: h, json: { ...body, model: 'no-such-model' } });
        expect(missing.status, missing.text).to.equal(RESPONSES_POST.test(path) ? 400 : 404);
        expectOpenAI('ErrorResponse', missing.body);
        expect(missing.body.error).to.include({ type: 'invalid_request_error', param: 'model' });
        const bad = await call('POST', path, { headers: h, json: { ...body, model: 42 } });
        expect(bad.status, bad.text).to.equal(400);
        expectOpenAI('ErrorResponse', bad.body);
        expect(bad.body.error.type).to.equal('invalid_request_error');
      });
    }

    it('a validation error names the offending field in param, as the message does', async () => {
      const r = await call('POST', '/v1/chat/completions', { headers: h, json: { ...chat, messages: [{ role: 'user', content: 'hi' }, { role: 'user', content: [{ type: 'text' }] }] } });
      await expectOpenAIError(r, 400, 'missing_required_parameter', 'invalid_request_error', 'messages[1].content[0].text');
      expect(r.body.error.message).to.include('messages[1].content[0].text');
      // a role outside OpenAI's: its own code and words, the field in param (openai-message-rules.test.ts)
      const role = await call('POST', '/v1/chat/completions', { headers: h, json: { ...chat, messages: [{ role: 'user', content: 'hi' }, { role: 'nobody', content: 'x' }] } });
      await expectOpenAIError(role, 400, 'invalid_value', 'invalid_request_error', 'messages[1].role');
      // the Responses dialect answers OpenAI's own code for it (responses-openai-refusals.test.ts)
      const t = await call('POST', '/v1/responses', { headers: h, json: { model: 'sim-chat', input: 'hi', temperature: 9 } });
      await expectOpenAIError(t, 400, 'decimal_above_max_value', 'invalid_request_error', 'temperature');
    });

    it('an embeddings refusal names its field in param', async () => {
      await expectOpenAIError(await call('POST', '/v1/embeddings', { headers: h, json: { model: 'sim-embed', input: ['ok', ''] } }), 400, 'invalid_input', 'invalid_request_error', 'input[1]');
      await expectOpenAIError(await call('POST', '/v1/embeddings', { headers: h, json: { model: 'sim-embed', input: 'x', dimensions: -1 } }), 400, 'invalid_input', 'invalid_request_error', 'dimensions');
      // a model of another capability: the field at fault is `model`, as for an unknown one (404, param model)
      await expectOpenAIError(await call('POST', '/v1/embeddings', { headers: h, json: { model: 'sim-chat', input: 'x' } }), 400, 'model_not_embedding_capable', 'invalid_request_error', 'model');
    });

    it('models: 401 and 404 (GET), invalid JSON 400 with param null, 415, and 429 rate_limit_error at the lane cap', async () => {
      await expectOpenAIError(await call('GET', '/v1/models'), 401, 'INVALID_API_KEY', 'invalid_request_error', null);
      const gone = await call('GET', '/v1/models/no-such-model', { headers: h });
      expect(gone.status).to.equal(404);
      expectOpenAI('ErrorResponse', gone.body);
      expect(gone.body.error.type).to.equal('invalid_request_error');
      const json = await call('POST', '/v1/chat/completions', { headers: { ...h, 'content-type': 'application/json' }, raw: '{"model":' });
      await expectOpenAIError(json, 400, 'invalid_json', 'invalid_request_error', null);
      const media = await call('POST', '/v1/chat/completions', { headers: { ...h, 'content-type': 'text/plain' }, raw: 'hi' });
      await expectOpenAIError(media, 415, 'unsupported_media_type', 'invalid_request_error', null);
      const full = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 0 } });
      for (const path of ['/v1/chat/completions', '/v1/responses']) {
        const body = path === '/v1/responses' ? { model: 'sim-chat', input: 'hi' } : chat;
        const r = await call('POST', path, { headers: keyHeader(full.key), json: body });
        await expectOpenAIError(r, 429, 'CONCURRENT_REQUEST_LIMIT_EXCEEDED', 'rate_limit_error', null);
        expect(r.headers.get('retry-after')).to.match(/^\d+$/);
      }
    });

    it('audio transcription: 401 and 400 invalid_request_error', async () => {
      const parts = multipartBody([{ name: 'model', value: 'sim-whisper' }]);
      await expectOpenAIError(await postAudio('/v1/audio/transcriptions', {}, parts), 401, 'INVALID_API_KEY', 'invalid_request_error', null);
      const noFile = await postAudio('/v1/audio/transcriptions', h, parts);
      expect(noFile.status, noFile.text).to.equal(400);
      expectOpenAI('ErrorResponse', noFile.body);
      expect(noFile.body.error.type).to.equal('invalid_request_error');
    });

    it('under path authentication (/a/{key}/…) the body is the same', async () => {
      const r = await call('POST', `/a/${o.key}/v1/chat/completions`, { json: { ...chat, model: 'no-such-model' } });
      expect(r.status).to.equal(404);
      expectOpenAI('ErrorResponse', r.body);
      expect(r.body.error).to.include({ code: 'model_not_found', type: 'invalid_request_error', param: 'model' });
    });

    it('upstream failures are server_error (502) and rate_limit_error (429 upstream_rate_limited)', async () => {
      env().sim.knobs.set('sim-chat-1', { status: 500 });
      const failed = await call('POST', '/v1/chat/completions', { headers: h, json: chat });
      expect(failed.status, failed.text).to.be.within(500, 599);
      expectOpenAI('ErrorResponse', failed.body);
      expect(failed.body.error).to.include({ type: 'server_error', param: null });
      env().sim.knobs.set('sim-chat-1', { status: 429, retryAfter: 1 });
      const limited = await call('POST', '/v1/chat/completions', { headers: h, json: chat });
      await expectOpenAIError(limited, 429, 'upstream_rate_limited', 'rate_limit_error', null);
    });

    it('a chat stream that fails after it started ends with an in-band ErrorResponse', async () => {
      env().sim.knobs.set('sim-chat-1', { dropAfterChunks: 2 });
      const s = await postSse('/v1/chat/completions', h, { ...chat, stream: true });
      expect(s.status).to.equal(200);
      const last = s.events.at(-1)!.data;
      expectOpenAI('ErrorResponse', last);
      expect(last.error.type).to.equal('server_error');
    });

    it('a Responses stream that fails after it started ends with a ResponseFailedEvent', async () => {
      env().sim.knobs.set('sim-chat-1', { dropAfterChunks: 2 });
      const s = await postSse('/v1/responses', h, { model: 'sim-chat', input: 'hi', stream: true });
      expect(s.status).to.equal(200);
      const last = s.events.at(-1)!;
      expect(last.event).to.equal('response.failed');
      expectResponsesEvent(responsesEventForDocument(last.data));
    });
  });

  describe('messages dialect: Anthropic error types', () => {
    const msg = { model: 'sim-claude', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };

    it('401 (no key, a wrong key) carries authentication_error, on both paths', async () => {
      for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
        await expectMessagesError(await call('POST', path, { headers: ANTHROPIC, json: msg }), 401, 'INVALID_API_KEY', 'authentication_error');
        await expectMessagesError(await call('POST', path, { headers: { ...ANTHROPIC, 'x-api-key': 'svc_wrong' }, json: msg }), 401, 'INVALID_API_KEY', 'authentication_error');
      }
    });

    it('400, 404 and 429 carry their types', async () => {
      const hh = { ...h, ...ANTHROPIC };
      await expectMessagesError(await call('POST', '/v1/messages', { headers: hh, json: { ...msg, max_tokens: -1 } }), 400, 'invalid_request', 'invalid_request_error');
      await expectMessagesError(await call('POST', '/v1/messages', { headers: hh, json: { ...msg, model: 'no-such-model' } }), 404, 'model_not_found', 'not_found_error');
      const full = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 0 } });
      await expectMessagesError(
        await call('POST', '/v1/messages', { headers: { ...keyHeader(full.key), ...ANTHROPIC }, json: msg }),
        429,
        'CONCURRENT_REQUEST_LIMIT_EXCEEDED',
        'rate_limit_error',
      );
    });

    it('a stream that fails after it started sends the wrapped ErrorResponse as its error event', async () => {
      env().sim.knobs.set('sim-chat-1', { dropAfterChunks: 2 });
      const s = await postSse('/v1/messages', { ...h, ...ANTHROPIC }, { ...msg, model: 'sim-chat', stream: true });
      expect(s.status).to.equal(200);
      const last = s.events.at(-1)!;
      expect(last.event).to.equal('error');
      expectAnthropic('ErrorResponse', last.data);
    });
  });
});
