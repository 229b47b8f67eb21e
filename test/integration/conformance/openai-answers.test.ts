import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { makeWav, SPEECH_LIKE } from '../../helpers/wav';
import { postAudio, multipartBody, transcriptionParts } from '../../helpers/multipart';
import { completionChunkForDocument, decodedEmbeddings, expectOpenAI, expectResponsesEvent, responsesEventForDocument, withoutNullUser } from '../../helpers/conformance';
import { sdkFinalChatCompletion, sdkFinalResponse } from '../../helpers/sdk-streams';

/**
 * Every JSON answer and streamed event of the OpenAI dialects against OpenAI's published OpenAPI
 * document (test/fixtures/vendor/openai), on an OpenAI-compatible upstream (`sim-chat`, passed
 * through) and an Anthropic-native one (`sim-claude`, translated by the gateway).
 */
const lookup = { name: 'lookup', description: 'Look something up', parameters: { type: 'object', properties: { query: { type: 'string' } } } };

describe('conformance: OpenAI dialect answers against openai-openapi', () => {
  let o: TestOrg;
  let h: Record<string, string>;
  before(async () => {
    o = await buildOrg(env().redis);
    h = keyHeader(o.key);
  });
  beforeEach(resetSim);

  for (const model of ['sim-chat', 'sim-claude']) {
    describe(`chat-style answers on ${model}`, () => {
      it('chat completion (text and tool call) is a CreateChatCompletionResponse, with refusal: null', async () => {
        const text = await call('POST', '/v1/chat/completions', { headers: h, json: { model, messages: [{ role: 'user', content: 'hello there' }] } });
        expect(text.status, text.text).to.equal(200);
        expectOpenAI('CreateChatCompletionResponse', text.body);
        expect(text.body.choices[0].message).to.have.property('refusal', null);
        const tool = await call('POST', '/v1/chat/completions', {
          headers: h,
          json: { model, messages: [{ role: 'user', content: 'use the tool please' }], tools: [{ type: 'function', function: lookup }] },
        });
        expect(tool.status, tool.text).to.equal(200);
        expect(tool.body.choices[0].finish_reason).to.equal('tool_calls');
        expectOpenAI('CreateChatCompletionResponse', tool.body);
      });

      it('every chat completion chunk is a CreateChatCompletionStreamResponse, the usage chunk included', async () => {
        for (const prompt of ['hello stream', 'use the tool now']) {
          const s = await postSse('/v1/chat/completions', h, {
            model,
            stream: true,
            stream_options: { include_usage: true },
            messages: [{ role: 'user', content: prompt }],
            tools: [{ type: 'function', function: lookup }],
          });
          expect(s.status, s.text).to.equal(200);
          expect(s.events.at(-1)?.data).to.equal('[DONE]');
          const chunks = s.events.slice(0, -1).map((e) => e.data);
          expect(chunks.length).to.be.greaterThan(2);
          for (const c of chunks) expectOpenAI('CreateChatCompletionStreamResponse', c);
          expect(chunks.at(-1).usage.total_tokens).to.be.greaterThan(0);
          const final = await sdkFinalChatCompletion(chunks); // and the SDK's ChatCompletionStream accumulates them
          expect(final.choices[0].finish_reason).to.equal(prompt.startsWith('use') ? 'tool_calls' : 'stop');
        }
      });

      it('legacy completion, JSON and streamed, is a CreateCompletionResponse', async () => {
        const r = await call('POST', '/v1/completions', { headers: h, json: { model, prompt: 'Say hello', max_tokens: 8 } });
        expect(r.status, r.text).to.equal(200);
        expectOpenAI('CreateCompletionResponse', r.body);
        const s = await postSse('/v1/completions', h, { model, prompt: 'Say hello', max_tokens: 8, stream: true });
        expect(s.status, s.text).to.equal(200);
        const chunks = s.events.filter((e) => e.data !== '[DONE]').map((e) => e.data);
        expect(chunks.length).to.be.greaterThan(1);
        for (const c of chunks) expectOpenAI('CreateCompletionResponse', completionChunkForDocument(c));
        expect(chunks.at(-1).choices[0].finish_reason).to.be.a('string');
      });

      it('a response (text and function call) is a Response; GET of the stored one too', async () => {
        const r = await call('POST', '/v1/responses', { headers: h, json: { model, input: 'hello responses' } });
        expect(r.status, r.text).to.equal(200);
        expectOpenAI('Response', withoutNullUser(r.body));
        expect(r.body.output[0].content[0].logprobs).to.deep.equal([]);
        expect(r.body.completed_at).to.be.a('number').and.to.be.at.least(r.body.created_at); // present when completed
        const tool = await call('POST', '/v1/responses', { headers: h, json: { model, input: 'use the tool', tools: [{ type: 'function', ...lookup }] } });
        expect(tool.status, tool.text).to.equal(200);
        expect(tool.body.output.map((i: { type: string }) => i.type)).to.include('function_call');
        expectOpenAI('Response', withoutNullUser(tool.body));
        const got = await call('GET', `/v1/responses/${r.body.id}`, { headers: h });
        expect(got.status).to.equal(200);
        expectOpenAI('Response', withoutNullUser(got.body));
      });

      it('every Responses stream event is the ResponseStreamEvent member its type names', async () => {
        for (const input of ['hello streamed responses', 'use the tool now']) {
          const s = await postSse('/v1/responses', h, { model, input, stream: true, tools: [{ type: 'function', ...lookup }] });
          expect(s.status, s.text).to.equal(200);
          expect(s.events.length).to.be.greaterThan(4);
          for (const e of s.events) {
            expect(e.event).to.equal(e.data.type);
            expectResponsesEvent(responsesEventForDocument(e.data));
          }
          expect(s.events.at(-1)!.data.type).to.equal('response.completed');
          expect([s.events[0].data.response.completed_at, typeof s.events.at(-1)!.data.response.completed_at]).to.deep.equal([null, 'number']);
          expect((await sdkFinalResponse(s.events.map((e) => e.data))).status).to.equal('completed'); // the SDK's ResponseStream accepts every event
        }
      });

      it('a response cut short by max_output_tokens is an incomplete Response, JSON and streamed', async () => {
        const json = { model, input: 'tell me a long story about the sea with ships and storms and sailors and whales and islands far away', max_output_tokens: 16 };
        const r = await call('POST', '/v1/responses', { headers: h, json });
        expect(r.status, r.text).to.equal(200);
        expect(r.body.status).to.equal('incomplete');
        expect(r.body.output.map((i: { status: string }) => i.status)).to.deep.equal(['incomplete']); // the message was cut (OutputMessage.status)
        expect(r.body.completed_at).to.equal(null); // "Only present when the status is completed"
        expectOpenAI('Response', withoutNullUser(r.body));
        const s = await postSse('/v1/responses', h, { ...json, stream: true });
        expect(s.events.at(-1)!.data.type).to.equal('response.incomplete');
        for (const e of s.events) expectResponsesEvent(responsesEventForDocument(e.data));
        expect(s.events.find((e) => e.data.type === 'response.output_item.done')!.data.item).to.include({ type: 'message', status: 'incomplete' });
        expect((s.events.at(-1)!.data.response as { output: Array<{ status: string }> }).output.map((i) => i.status)).to.deep.equal(['incomplete']);
        expect((await sdkFinalResponse(s.events.map((e) => e.data))).status).to.equal('incomplete');
      });
    });
  }

  it("a reasoning upstream's answer (reasoning_content) is a Response with a reasoning item, JSON, stored and every stream event; the SDK accepts the events", async () => {
    env().sim.knobs.set('sim-chat-1', { reasoning: { field: 'reasoning_content', text: 'Weighing the question first.' }, usageExtra: { completion_tokens_details: { reasoning_tokens: 4 } } });
    try {
      const r = await call('POST', '/v1/responses', { headers: h, json: { model: 'sim-chat', input: 'hello reasoning conformance' } });
      expect(r.status, r.text).to.equal(200);
      expect(r.body.output.map((i: { type: string }) => i.type)).to.deep.equal(['reasoning', 'message']);
      expectOpenAI('Response', withoutNullUser(r.body));
      expectOpenAI('ReasoningItem', r.body.output[0]);
      const got = await call('GET', `/v1/responses/${r.body.id}`, { headers: h });
      expectOpenAI('Response', withoutNullUser(got.body));
      const s = await postSse('/v1/responses', h, { model: 'sim-chat', input: 'hello streamed reasoning conformance', stream: true });
      expect(s.status, s.text).to.equal(200);
      for (const e of s.events) {
        expect(e.event).to.equal(e.data.type);
        expectResponsesEvent(responsesEventForDocument(e.data));
      }
      expect(s.events.map((e) => e.data.type)).to.include.members(['response.reasoning_text.delta', 'response.reasoning_text.done']);
      const final = await sdkFinalResponse(s.events.map((e) => e.data));
      expect(final.output.map((i) => i.type)).to.deep.equal(['reasoning', 'message']);
      expect(final.output_text).not.to.include('Weighing');
    } finally {
      env().sim.knobs.reset();
    }
  });

  it('embeddings (float and base64) are a CreateEmbeddingResponse', async () => {
    for (const encoding_format of ['float', 'base64']) {
      const r = await call('POST', '/v1/embeddings', { headers: h, json: { model: 'sim-embed', input: ['one', 'two'], encoding_format } });
      expect(r.status, r.text).to.equal(200);
      expectOpenAI('CreateEmbeddingResponse', decodedEmbeddings(r.body));
    }
  });

  it('the models list is a ListModelsResponse and one model is a Model', async () => {
    const list = await call('GET', '/v1/models', { headers: h });
    expect(list.status).to.equal(200);
    expectOpenAI('ListModelsResponse', list.body);
    const one = await call('GET', '/v1/models/sim-chat', { headers: h });
    expect(one.status).to.equal(200);
    expectOpenAI('Model', one.body);
  });

  // The document's `size` lists the GPT image sizes only, so the request asks for one of them.
  it('an image generation (url and b64_json) is an ImagesResponse', async () => {
    for (const response_format of ['url', 'b64_json']) {
      const r = await call('POST', '/v1/images/generations', { headers: h, json: { model: 'sim-image', prompt: 'a lighthouse', size: '1024x1024', response_format } });
      expect(r.status, r.text).to.equal(200);
      expectOpenAI('ImagesResponse', r.body);
    }
  });

  it('a transcription is a CreateTranscriptionResponseJson, or ...VerboseJson when asked', async () => {
    const wav = makeWav(SPEECH_LIKE);
    const json = await postAudio('/v1/audio/transcriptions', h, multipartBody(transcriptionParts(wav)));
    expect(json.status, json.text).to.equal(200);
    expectOpenAI('CreateTranscriptionResponseJson', json.body);
    const verbose = await postAudio('/v1/audio/transcriptions', h, multipartBody(transcriptionParts(wav, [{ name: 'response_format', value: 'verbose_json' }])));
    expect(verbose.status, verbose.text).to.equal(200);
    expectOpenAI('CreateTranscriptionResponseVerboseJson', verbose.body);
  });
});
