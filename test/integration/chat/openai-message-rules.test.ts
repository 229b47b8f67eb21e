import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { translatedCompletionsSuite } from '../../helpers/translated-completions';
import { call, keyHeader } from '../../helpers/http';
import { expectOpenAI } from '../../helpers/conformance';
import { outcome } from '../../helpers/responses-background';

const ROLES = "'system', 'assistant', 'user', 'function', 'tool', and 'developer'";
const user = { role: 'user', content: 'hello' };
const call1 = { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } };

/**
 * A chat body's `messages` and each turn's role and content, refused as OpenAI's API refuses them
 * (code, param and words), on every upstream kind, JSON and streamed, before anything is sent or
 * billed. Before, a missing or null content went upstream (Anthropic's translation sent an empty
 * turn and answered, Gemini and Bedrock refused an empty conversation in their own words), and the
 * rest were refused in Joi's words with code invalid_request.
 */
describe("OpenAI's refusals of a chat body's messages, roles and contents", function () {
  this.timeout(60_000);
  const s = translatedCompletionsSuite();
  const models = ['sim-chat', 'sim-claude', 'test-gemini', 'sim-bedrock-claude'];
  const post = (json: Record<string, unknown>) => call('POST', '/v1/chat/completions', { headers: keyHeader(s.o.key), json });

  const cases: Array<[string, Record<string, unknown>, { code: string; param: string; message: string }]> = [
    ['no messages', {}, { code: 'missing_required_parameter', param: 'messages', message: "Missing required parameter: 'messages'." }],
    ['messages: []', { messages: [] }, { code: 'empty_array', param: 'messages', message: "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead." }],
    ['an unknown role', { messages: [{ role: 'robot', content: 'x' }] }, { code: 'invalid_value', param: 'messages[0].role', message: `Invalid value: 'robot'. Supported values are: ${ROLES}.` }],
    ['a role not a string', { messages: [{ role: 1, content: 'x' }] }, { code: 'invalid_type', param: 'messages[0].role', message: `Invalid type for 'messages[0].role': expected one of ${ROLES.replace('and', 'or')}, but got an integer instead.` }],
    ['no role', { messages: [user, { content: 'x' }] }, { code: 'missing_required_parameter', param: 'messages[1].role', message: "Missing required parameter: 'messages[1].role'." }],
    ['a user turn without content', { messages: [{ role: 'user' }] }, { code: 'missing_required_parameter', param: 'messages[0].content', message: "Missing required parameter: 'messages[0].content'." }],
    ['a system turn without content', { messages: [{ role: 'system' }, user] }, { code: 'missing_required_parameter', param: 'messages[0].content', message: "Missing required parameter: 'messages[0].content'." }],
    ['a user turn with null content', { messages: [user, { role: 'assistant', content: 'a' }, { role: 'user', content: null }] }, { code: 'invalid_request', param: 'messages.[2].content', message: "Invalid value for 'content': expected a string, got null." }],
    ['a tool result with null content', { messages: [user, { role: 'assistant', content: null, tool_calls: [call1] }, { role: 'tool', tool_call_id: 'call_1', content: null }] }, { code: 'invalid_request', param: 'messages.[2].content', message: "Invalid value for 'content': expected a string, got null." }],
    ['content: []', { messages: [{ role: 'user', content: [] }] }, { code: 'empty_array', param: 'messages[0].content', message: "Invalid 'messages[0].content': empty array. Expected an array with minimum length 1, but got an empty array instead." }],
  ];

  it('each is 400 in OpenAI\'s code, param and words on every upstream kind, JSON and streamed; nothing sent or billed', async () => {
    const before = await s.billed();
    for (const model of models) {
      for (const [what, fields, error] of cases) {
        for (const stream of [false, true]) {
          const r = await post(Object.assign({ model, stream }, fields));
          expect(r.status, `${model} ${what} stream ${stream}: ${r.text}`).to.equal(400);
          expect(r.body.error, `${model} ${what}`).to.deep.equal(Object.assign({ type: 'invalid_request_error' }, error));
          expectOpenAI('ErrorResponse', r.body);
        }
      }
    }
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await s.billed(), 'nothing billed').to.equal(before);
  });

  it("a body without model is OpenAI's 400 'you must provide a model parameter', on chat and legacy completions", async () => {
    for (const [path, json] of [['/v1/chat/completions', { messages: [user] }], ['/v1/completions', { prompt: 'x' }]] as const) {
      const r = await call('POST', path, { headers: keyHeader(s.o.key), json });
      expect(r.status, r.text).to.equal(400);
      expect(r.body.error, path).to.include({ code: 'invalid_request', type: 'invalid_request_error', message: 'you must provide a model parameter' });
    }
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
  });

  it('the official client reads them as OpenAI\'s BadRequestError with its code and param', async () => {
    const err = await outcome(s.client.chat.completions.create({ model: 'sim-claude', messages: [{ role: 'user' } as unknown as OpenAI.ChatCompletionMessageParam] }));
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err as InstanceType<typeof OpenAI.BadRequestError>).to.deep.include({ status: 400, type: 'invalid_request_error', code: 'missing_required_parameter', param: 'messages[0].content' });
    const nul = await outcome(s.client.chat.completions.create({ model: 'test-gemini', messages: [{ role: 'user', content: null as unknown as string }] }));
    expect(nul as InstanceType<typeof OpenAI.BadRequestError>).to.deep.include({ status: 400, param: 'messages.[0].content', message: "400 Invalid value for 'content': expected a string, got null." });
  });

  it('what OpenAI takes still answers: an assistant turn with null or no content, a function result of null, an empty string', async () => {
    for (const model of models) {
      const messages = [user, { role: 'assistant', content: null }, { role: 'assistant' }, { role: 'user', content: '' }, { role: 'user', content: 'again' }];
      const r = await post({ model, messages });
      expect(r.status, `${model} ${r.text}`).to.equal(200);
    }
    const fn = await post({ model: 'sim-chat', messages: [user, { role: 'function', name: 'f', content: null }] });
    expect(fn.status, fn.text).to.equal(200);
  });
});
