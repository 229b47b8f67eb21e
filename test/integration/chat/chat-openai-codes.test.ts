import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { call, keyHeader } from '../../helpers/http';
import { openaiOrg } from '../../helpers/openai-org';
import { expectOpenAI } from '../../helpers/conformance';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';

/**
 * Chat completions' and legacy completions' validation refusals in OpenAI's codes, params and words,
 * as the Responses routes answer them (api/routes/openai-words.ts): a wrong type `invalid_type`
 * ("Invalid type for 'temperature': expected a decimal, but got a string instead."), a number out of
 * range `decimal_above_max_value` / `integer_below_min_value` … ("Invalid 'n': integer above maximum
 * value. Expected a value <= 128, but got 130 instead.", as OpenAI's API answered it in
 * thisisartium/continuous-alignment-testing issue 25), a value outside the listed ones
 * `invalid_value`, a missing field `missing_required_parameter`, a string too long
 * `string_above_max_length`. They were 400 `invalid_request` in Joi's words ("'temperature' must be a
 * number"). Nothing is sent upstream or billed, JSON or streamed, on an OpenAI-compatible and a
 * translated upstream. A rule's own code still wins, and a body without a model keeps OpenAI's words
 * for it (the gateway's invalid_request where OpenAI's code is null).
 */
describe("chat and legacy completions: validation refusals in OpenAI's codes and words", function () {
  this.timeout(60_000);
  const s = openaiOrg();
  const msgs = [{ role: 'user', content: 'hi' }];
  const post = (path: string, json: unknown) => call('POST', path, { headers: keyHeader(s.o.key), json });
  const billed = async () => {
    await usageSettled();
    return UsageEvent.count({ where: { orgId: s.o.org.id } });
  };
  const EFFORTS = "'none', 'minimal', 'low', 'medium', 'high', 'xhigh', and 'max'";
  const TIERS = "'auto', 'default', 'flex', 'scale', 'priority', and 'fast'";

  // [what, fields beside model and messages, param, code, message]
  const chat: Array<[string, Record<string, unknown>, string, string, string]> = [
    // wrong types
    ['temperature as a string', { temperature: 'hot' }, 'temperature', 'invalid_type', "Invalid type for 'temperature': expected a decimal, but got a string instead."],
    ['n as a decimal', { n: 1.5 }, 'n', 'invalid_type', "Invalid type for 'n': expected an integer, but got a decimal instead."],
    ['max_tokens as a string', { max_tokens: '100' }, 'max_tokens', 'invalid_type', "Invalid type for 'max_tokens': expected an integer, but got a string instead."],
    ['stream as a string', { stream: 'yes' }, 'stream', 'invalid_type', "Invalid type for 'stream': expected a boolean, but got a string instead."],
    ['messages as a string', { messages: 'hi' }, 'messages', 'invalid_type', "Invalid type for 'messages': expected an array, but got a string instead."],
    ['a content that is an object', { messages: [{ role: 'user', content: { text: 'hi' } }] }, 'messages[0].content', 'invalid_type', "Invalid type for 'messages[0].content': expected one of a string or array of objects, but got an object instead."],
    ['service_tier as a number', { service_tier: 5 }, 'service_tier', 'invalid_type', `Invalid type for 'service_tier': expected one of ${TIERS.replace('and', 'or')}, but got an integer instead.`],
    ['tool_choice as a number', { tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: 5 }, 'tool_choice', 'invalid_type', "Invalid type for 'tool_choice': expected one of an object or 'none', 'auto', or 'required', but got an integer instead."],
    ['model as a number', { model: 7 }, 'model', 'invalid_type', "Invalid type for 'model': expected a string, but got an integer instead."],
    // out-of-range numbers
    ['temperature above 2', { temperature: 3 }, 'temperature', 'decimal_above_max_value', "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 3 instead."],
    ['temperature below 0', { temperature: -0.5 }, 'temperature', 'decimal_below_min_value', "Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got -0.5 instead."],
    ['top_p above 1', { top_p: 2 }, 'top_p', 'decimal_above_max_value', "Invalid 'top_p': decimal above maximum value. Expected a value <= 1, but got 2 instead."],
    ['presence_penalty above 2', { presence_penalty: 5 }, 'presence_penalty', 'decimal_above_max_value', "Invalid 'presence_penalty': decimal above maximum value. Expected a value <= 2, but got 5 instead."],
    ['n of 0', { n: 0 }, 'n', 'integer_below_min_value', "Invalid 'n': integer below minimum value. Expected a value >= 1, but got 0 instead."],
    ['n above 128', { n: 130 }, 'n', 'integer_above_max_value', "Invalid 'n': integer above maximum value. Expected a value <= 128, but got 130 instead."],
    ['max_completion_tokens below 1', { max_completion_tokens: -1 }, 'max_completion_tokens', 'integer_below_min_value', "Invalid 'max_completion_tokens': integer below minimum value. Expected a value >= 1, but got -1 instead."],
    // values outside the listed ones
    ['service_tier unknown', { service_tier: 'x' }, 'service_tier', 'invalid_value', `Invalid value: 'x'. Supported values are: ${TIERS}.`],
    ['reasoning_effort unknown', { reasoning_effort: 'extreme' }, 'reasoning_effort', 'invalid_value', `Invalid value: 'extreme'. Supported values are: ${EFFORTS}.`],
    ['tool_choice unknown', { tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: 'sometimes' }, 'tool_choice', 'invalid_value', "Invalid value: 'sometimes'. Supported values are: 'none', 'auto', and 'required'."],
    // missing fields
    ['a text part without its text', { messages: [{ role: 'user', content: [{ type: 'text' }] }] }, 'messages[0].content[0].text', 'missing_required_parameter', "Missing required parameter: 'messages[0].content[0].text'."],
    ['a tool message without its call id', { messages: [{ role: 'tool', content: 'r' }] }, 'messages[0].tool_call_id', 'missing_required_parameter', "Missing required parameter: 'messages[0].tool_call_id'."],
    // lengths
    ['safety_identifier over 128 characters', { safety_identifier: 's'.repeat(129) }, 'safety_identifier', 'string_above_max_length', "Invalid 'safety_identifier': string too long. Expected a string with maximum length 128, but got a string with length 129 instead."],
    // a rule's own code still wins; a body without a model keeps OpenAI's words for it
    ['an empty messages list (its own empty_array)', { messages: [] }, 'messages', 'empty_array', "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead."],
    ['a turn without its role (its own missing_required_parameter)', { messages: [{ content: 'x' }] }, 'messages[0].role', 'missing_required_parameter', "Missing required parameter: 'messages[0].role'."],
    ['verbosity unknown (its own invalid_value)', { verbosity: 'loud' }, 'verbosity', 'invalid_value', "Invalid value: 'loud'. Supported values are: 'low', 'medium', and 'high'."],
    ['no model', { model: undefined }, 'model', 'invalid_request', 'you must provide a model parameter'],
  ];

  for (const [what, extra, param, code, message] of chat) {
    it(`POST /v1/chat/completions, ${what}: 400 ${code}, JSON and streamed, OpenAI-compatible and translated upstream; nothing sent or billed`, async () => {
      const before = await billed();
      for (const model of ['sim-chat', 'sim-claude']) {
        for (const stream of [false, true]) {
          const json = { model, messages: msgs, ...(typeof extra.stream === 'string' ? {} : { stream }), ...extra };
          const r = await post('/v1/chat/completions', json);
          expect(r.status, `${model} stream ${stream} ${r.text}`).to.equal(400);
          expect(r.body.error, `${model} stream ${stream}`).to.deep.equal({ code, type: 'invalid_request_error', param, message });
          expectOpenAI('ErrorResponse', r.body);
        }
      }
      expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
      expect(await billed(), 'nothing billed').to.equal(before);
    });
  }

  // [what, fields beside model and prompt, param, code, message]
  const completions: Array<[string, Record<string, unknown>, string, string, string]> = [
    ['temperature as a string', { temperature: 'hot' }, 'temperature', 'invalid_type', "Invalid type for 'temperature': expected a decimal, but got a string instead."],
    ['echo as a string', { echo: 'yes' }, 'echo', 'invalid_type', "Invalid type for 'echo': expected a boolean, but got a string instead."],
    ['best_of as a decimal', { best_of: 1.5 }, 'best_of', 'invalid_type', "Invalid type for 'best_of': expected an integer, but got a decimal instead."],
    ['max_tokens below 0', { max_tokens: -1 }, 'max_tokens', 'integer_below_min_value', "Invalid 'max_tokens': integer below minimum value. Expected a value >= 0, but got -1 instead."],
    ['logprobs above 5', { logprobs: 6 }, 'logprobs', 'integer_above_max_value', "Invalid 'logprobs': integer above maximum value. Expected a value <= 5, but got 6 instead."],
    ['top_p above 1', { top_p: 1.5 }, 'top_p', 'decimal_above_max_value', "Invalid 'top_p': decimal above maximum value. Expected a value <= 1, but got 1.5 instead."],
    ['no prompt', { prompt: undefined }, 'prompt', 'missing_required_parameter', "Missing required parameter: 'prompt'."],
    // a rule's own code still wins
    ['5 stop sequences (its own array_above_max_length)', { stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop', 'array_above_max_length', "Invalid 'stop': array too long. Expected an array with maximum length 4, but got an array with length 5 instead."],
  ];

  for (const [what, extra, param, code, message] of completions) {
    it(`POST /v1/completions, ${what}: 400 ${code}, OpenAI-compatible and translated upstream; nothing sent or billed`, async () => {
      const before = await billed();
      for (const model of ['sim-chat', 'sim-claude']) {
        const r = await post('/v1/completions', { model, prompt: 'x', ...extra });
        expect(r.status, `${model} ${r.text}`).to.equal(400);
        expect(r.body.error, model).to.deep.equal({ code, type: 'invalid_request_error', param, message });
      }
      expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
      expect(await billed(), 'nothing billed').to.equal(before);
    });
  }

  it("the SDK's BadRequestError carries OpenAI's code and param", async () => {
    const err = await s.c.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], temperature: 'hot' as unknown as number }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err).to.include({ status: 400, code: 'invalid_type', param: 'temperature', type: 'invalid_request_error' });
  });

  it('what was accepted is still served (bounds, null, unknown fields)', async () => {
    const r = await post('/v1/chat/completions', { model: 'sim-chat', messages: msgs, temperature: 2, top_p: 0, n: 1, presence_penalty: -2, max_completion_tokens: 1, service_tier: null, a_field_from_next_year: { x: 1 } });
    expect(r.status, r.text).to.equal(200);
    const c = await post('/v1/completions', { model: 'sim-chat', prompt: 'x', temperature: 0, max_tokens: 5, logprobs: 5, best_of: 1 });
    expect(c.status, c.text).to.equal(200);
  });
});
