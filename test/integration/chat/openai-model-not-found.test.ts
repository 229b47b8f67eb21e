import { expect } from 'chai';
import OpenAI from 'openai';
import { openaiOrg } from '../../helpers/openai-org';
import { call, keyHeader } from '../../helpers/http';
import { outcome } from '../../helpers/responses-background';
import { env } from '../../helpers/harness';
import { expectOpenAI } from '../../helpers/conformance';
import { billedEvents } from '../../helpers/usage';

const NOT_FOUND = 'The model `gpt-nope` does not exist or you do not have access to it.';
const NOT_CHAT = 'This is not a chat model and thus not supported in the v1/chat/completions endpoint. Did you mean to use v1/completions?';

/**
 * An unknown model is answered in OpenAI's words ("The model `x` does not exist or you do not have
 * access to it.", code model_not_found, its API's answer as clients quote it), on chat completions,
 * legacy completions, embeddings and the models endpoint; the gateway's own sentence ("The model 'x'
 * does not exist.") differed from it.
 */
describe("an unknown model in OpenAI's words", function () {
  this.timeout(30_000);
  const s = openaiOrg();

  it('chat (JSON and streamed), legacy completions, embeddings and GET /v1/models/{id} answer 404 model_not_found in its sentence; nothing sent', async () => {
    const h = { headers: keyHeader(s.o.key) };
    const replies = [
      await call('POST', '/v1/chat/completions', { ...h, json: { model: 'gpt-nope', messages: [{ role: 'user', content: 'hi' }] } }),
      await call('POST', '/v1/chat/completions', { ...h, json: { model: 'gpt-nope', messages: [{ role: 'user', content: 'hi' }], stream: true } }),
      await call('POST', '/v1/completions', { ...h, json: { model: 'gpt-nope', prompt: 'hi' } }),
      await call('POST', '/v1/embeddings', { ...h, json: { model: 'gpt-nope', input: 'hi' } }),
      await call('GET', '/v1/models/gpt-nope', h),
    ];
    for (const r of replies) {
      expect(r.status, r.text).to.equal(404);
      expect(r.body.error, r.text).to.include({ code: 'model_not_found', type: 'invalid_request_error', message: NOT_FOUND });
    }
    const err = await outcome(s.c.chat.completions.create({ model: 'gpt-nope', messages: [{ role: 'user', content: 'hi' }] }));
    expect(err).to.be.instanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).message).to.equal(`404 ${NOT_FOUND}`);
    expect(env().sim.log.entries).to.have.length(0);
  });

  /**
   * A model that is not a chat model (an embeddings model, a decision model) on chat completions:
   * OpenAI's 404 in its words, `param: "model"` (its body as quoted in egoist/chatwise-releases
   * issue 1256; its code is null, the gateway keeps `model_not_chat_capable`). It was the gateway's
   * 400 "The model 'x' does not serve chat."; the other chat-style routes keep their 400.
   */
  it("a non-chat model on chat completions (JSON and streamed) is OpenAI's 404 'This is not a chat model ...' naming model; the other routes keep 400; nothing sent or billed", async () => {
    const h = { headers: keyHeader(s.o.key) };
    const before = await billedEvents(s.o.org.id);
    for (const model of ['sim-embed', 'sim-decide']) {
      for (const stream of [false, true]) {
        const r = await call('POST', '/v1/chat/completions', { ...h, json: { model, messages: [{ role: 'user', content: 'hi' }], stream } });
        expect(r.status, r.text).to.equal(404);
        expect(r.body.error, r.text).to.deep.equal({ code: 'model_not_chat_capable', message: NOT_CHAT, type: 'invalid_request_error', param: 'model' });
        expectOpenAI('ErrorResponse', r.body);
      }
    }
    const err = await outcome(s.c.chat.completions.create({ model: 'sim-embed', messages: [{ role: 'user', content: 'hi' }] }));
    expect(err).to.be.instanceOf(OpenAI.NotFoundError);
    expect(err as InstanceType<typeof OpenAI.NotFoundError>).to.deep.include({ status: 404, message: `404 ${NOT_CHAT}`, param: 'model', code: 'model_not_chat_capable' });
    const completions = await call('POST', '/v1/completions', { ...h, json: { model: 'sim-embed', prompt: 'hi' } });
    expect([completions.status, completions.body.error.code], completions.text).to.deep.equal([400, 'model_not_chat_capable']);
    const responses = await call('POST', '/v1/responses', { ...h, json: { model: 'sim-embed', input: 'hi' } });
    expect([responses.status, responses.body.error.code], responses.text).to.deep.equal([400, 'model_not_chat_capable']);
    expect(env().sim.log.entries).to.have.length(0);
    expect(await billedEvents(s.o.org.id)).to.equal(before);
  });
});
