import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { call, keyHeader } from '../../helpers/http';
import { openaiOrg } from '../../helpers/openai-org';
import { outcome } from '../../helpers/responses-background';
import { billedEvents } from '../../helpers/usage';
import { expectOpenAI } from '../../helpers/conformance';

/**
 * An unknown or empty model on the Responses API is OpenAI's 400 `model_not_found`, `param:
 * "model"`, "The requested model 'x' does not exist." (its answer to Codex, openai/codex issue 6705;
 * to the Python SDK's responses.parse, a 400 BadRequestError), on `POST /v1/responses` (JSON,
 * streamed, background), `input_tokens` and `compact`. They were chat's 404 "The model `x` does not
 * exist or you do not have access to it." (an empty model on `input_tokens` and `compact`: 400
 * `empty_string`, a minimum length the vendored document does not set). Chat keeps its 404.
 */
describe("responses dialect: an unknown model in the Responses API's words", function () {
  this.timeout(30_000);
  const s = openaiOrg();
  const post = (path: string, json: unknown) => call('POST', path, { headers: keyHeader(s.o.key), json });
  const notFound = (model: string) => ({ code: 'model_not_found', type: 'invalid_request_error', param: 'model', message: `The requested model '${model}' does not exist.` });

  for (const model of ['gpt-nope', '']) {
    it(`model '${model}': 400 model_not_found on create (JSON, streamed, background), input_tokens and compact; nothing sent or billed`, async () => {
      const before = await billedEvents(s.o.org.id);
      const bodies: Array<[string, Record<string, unknown>]> = [
        ['/v1/responses', { model, input: 'hi' }],
        ['/v1/responses', { model, input: 'hi', stream: true }],
        ['/v1/responses', { model, input: 'hi', background: true }],
        ['/responses', { model, input: 'hi' }],
        ['/v1/responses/input_tokens', { model, input: 'hi' }],
        ['/v1/responses/compact', { model, input: 'hi' }],
      ];
      for (const [path, json] of bodies) {
        const r = await post(path, json);
        expect(r.status, `${path} ${JSON.stringify(json)} ${r.text}`).to.equal(400);
        expect(r.body.error, path).to.deep.equal(notFound(model));
        expectOpenAI('ErrorResponse', r.body);
      }
      // the official SDK raises its BadRequestError (it raised NotFoundError for the 404)
      for (const sent of [
        s.c.responses.create({ model, input: 'hi' }),
        s.c.responses.inputTokens.count({ model, input: 'hi' }),
        s.c.responses.compact({ model, input: 'hi' }),
      ]) {
        const err = await outcome(sent);
        expect(err).to.be.instanceOf(OpenAI.BadRequestError);
        expect(err).to.deep.include({ status: 400, code: 'model_not_found', param: 'model', message: `400 ${notFound(model).message}` });
      }
      expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
      expect(await billedEvents(s.o.org.id), 'nothing billed').to.equal(before);
    });
  }

  it("model null on create and compact: 400 invalid_type in the Responses API's words ('an object', not 'null'), JSON and streamed, nothing sent or billed", async () => {
    const before = await billedEvents(s.o.org.id);
    const bodies: Array<[string, Record<string, unknown>]> = [
      ['/v1/responses', {}],
      ['/v1/responses', { stream: true }],
      ['/v1/responses', { background: true }],
      ['/v1/responses/compact', {}],
    ];
    for (const [path, extra] of bodies) {
      const r = await post(path, Object.assign({ model: null, input: 'hi' }, extra));
      expect(r.status, `${path} ${r.text}`).to.equal(400);
      expect(r.body.error, path).to.deep.equal({ code: 'invalid_type', type: 'invalid_request_error', param: 'model', message: "Invalid type for 'model': expected a string, but got an object instead." });
    }
    // another field's null keeps OpenAI's "null" (its answers quote it so: 'instructions', a tool call's 'id')
    const other = await post('/v1/responses', { model: 'sim-chat', input: 'hi', user: null });
    expect(other.status, other.text).to.equal(400);
    expect(other.body.error.message).to.equal("Invalid type for 'user': expected a string, but got null instead.");
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billedEvents(s.o.org.id), 'nothing billed').to.equal(before);
  });

  it('input_tokens without a model still counts with the default profile; chat completions keep their 404', async () => {
    const counted = await post('/v1/responses/input_tokens', { input: 'hi' });
    expect(counted.status, counted.text).to.equal(200);
    const chat = await post('/v1/chat/completions', { model: 'gpt-nope', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status, chat.text).to.equal(404);
    expect(chat.body.error).to.include({ code: 'model_not_found', message: 'The model `gpt-nope` does not exist or you do not have access to it.' });
    expect(env().sim.log.entries).to.have.length(0);
  });
});
