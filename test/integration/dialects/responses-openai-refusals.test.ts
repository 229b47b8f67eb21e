import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { call, keyHeader } from '../../helpers/http';
import { openaiOrg } from '../../helpers/openai-org';
import { billedEvents } from '../../helpers/usage';

/**
 * The Responses API's validation refusals in OpenAI's codes, params and words (its bodies as its API
 * answers them: "Missing required parameter: 'input[0].content'." `missing_required_parameter`,
 * "Invalid type for 'temperature': expected a decimal, but got a string instead." `invalid_type`,
 * "Invalid value: 'bogus'. Supported values are: 'auto' and 'disabled'." `invalid_value`, "Invalid
 * 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 10 instead."
 * `integer_below_min_value` …). They were all 400 `invalid_request` in Joi's words ("'temperature'
 * must be a number"). On `POST /v1/responses` and `/v1/responses/input_tokens`, nothing sent upstream.
 */
describe('responses dialect: validation refusals in OpenAI’s codes and words', () => {
  const s = openaiOrg();
  const post = (path: string, json: unknown) => call('POST', path, { headers: keyHeader(s.o.key), json });
  const ROLES = "'assistant', 'system', 'developer', and 'user'";
  const NO_INPUT = 'One of "input" or "previous_response_id" or \'prompt\' or \'conversation\' must be provided.';
  const PATTERN = (param: string) => `Invalid '${param}': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`;
  const TOO_LONG = (param: string, max = 64) => `Invalid '${param}': string too long. Expected a string with maximum length ${max}, but got a string with length ${max + 1} instead.`;

  // [what, body, param (null: none), code, message]
  const cases: Array<[string, Record<string, unknown>, string | null, string, string]> = [
    // missing parts
    ['model missing', { input: 'x' }, 'model', 'missing_required_parameter', "Missing required parameter: 'model'."],
    ['a message without content', { model: 'sim-chat', input: [{ role: 'user' }] }, 'input[0].content', 'missing_required_parameter', "Missing required parameter: 'input[0].content'."],
    ['an input_text part without text', { model: 'sim-chat', input: [{ role: 'user', content: [{ type: 'input_text' }] }] }, 'input[0].content[0].text', 'missing_required_parameter', "Missing required parameter: 'input[0].content[0].text'."],
    ['an item reference without its id', { model: 'sim-chat', input: [{ type: 'item_reference' }] }, 'input[0].id', 'missing_required_parameter', "Missing required parameter: 'input[0].id'."],
    // the tools an item loads and a tool search call's arguments, required as OpenAI's item params require them (schema.ts)
    ['a tool_search_output without its tools', { model: 'sim-chat', input: [{ role: 'user', content: 'x' }, { type: 'tool_search_output', execution: 'client', call_id: 'ts_1' }] }, 'input[1].tools', 'missing_required_parameter', "Missing required parameter: 'input[1].tools'."],
    ['an additional_tools item without its tools', { model: 'sim-chat', input: [{ role: 'user', content: 'x' }, { type: 'additional_tools', role: 'developer' }] }, 'input[1].tools', 'missing_required_parameter', "Missing required parameter: 'input[1].tools'."],
    ['a tool_search_call without its arguments', { model: 'sim-chat', input: [{ role: 'user', content: 'x' }, { type: 'tool_search_call', execution: 'client', call_id: 'ts_1' }] }, 'input[1].arguments', 'missing_required_parameter', "Missing required parameter: 'input[1].arguments'."],
    ['a function tool without its name', { model: 'sim-chat', input: 'x', tools: [{ type: 'function' }] }, 'tools[0].name', 'missing_required_parameter', "Missing required parameter: 'tools[0].name'."],
    ['an empty input list', { model: 'sim-chat', input: [] }, null, 'missing_required_parameter', NO_INPUT],
    ['an empty input string', { model: 'sim-chat', input: '' }, null, 'missing_required_parameter', NO_INPUT],
    ['an empty call id', { model: 'sim-chat', input: [{ type: 'function_call_output', call_id: '', output: 'x' }] }, 'input[0].call_id', 'empty_string', "Invalid 'input[0].call_id': empty string. Expected a string with minimum length 1, but got an empty string instead."],
    // wrong types
    ['temperature as a string', { model: 'sim-chat', input: 'x', temperature: 'hot' }, 'temperature', 'invalid_type', "Invalid type for 'temperature': expected a decimal, but got a string instead."],
    ['max_output_tokens as a string', { model: 'sim-chat', input: 'x', max_output_tokens: 'x' }, 'max_output_tokens', 'invalid_type', "Invalid type for 'max_output_tokens': expected an integer, but got a string instead."],
    ['max_output_tokens a decimal', { model: 'sim-chat', input: 'x', max_output_tokens: 20.5 }, 'max_output_tokens', 'invalid_type', "Invalid type for 'max_output_tokens': expected an integer, but got a decimal instead."],
    ['stream as a string', { model: 'sim-chat', input: 'x', stream: 'yes' }, 'stream', 'invalid_type', "Invalid type for 'stream': expected a boolean, but got a string instead."],
    ['model as an integer', { model: 7, input: 'x' }, 'model', 'invalid_type', "Invalid type for 'model': expected a string, but got an integer instead."],
    ['instructions as an object', { model: 'sim-chat', input: 'x', instructions: { a: 1 } }, 'instructions', 'invalid_type', "Invalid type for 'instructions': expected a string, but got an object instead."],
    ['input as an integer', { model: 'sim-chat', input: 7 }, 'input', 'invalid_type', "Invalid type for 'input': expected one of a string or array of input items, but got an integer instead."],
    ['an input item that is no object', { model: 'sim-chat', input: [7] }, 'input[0]', 'invalid_type', "Invalid type for 'input[0]': expected an input item, but got an integer instead."],
    ['metadata as a string', { model: 'sim-chat', input: 'x', metadata: 'x' }, 'metadata', 'invalid_type', "Invalid type for 'metadata': expected a metadata object, but got a string instead."],
    ['tools as a string', { model: 'sim-chat', input: 'x', tools: 'x' }, 'tools', 'invalid_type', "Invalid type for 'tools': expected an array of tools, but got a string instead."],
    ['reasoning as a string', { model: 'sim-chat', input: 'x', reasoning: 'low' }, 'reasoning', 'invalid_type', "Invalid type for 'reasoning': expected an object, but got a string instead."],
    ['tool_choice as an integer', { model: 'sim-chat', input: 'x', tool_choice: 7 }, 'tool_choice', 'invalid_type', "Invalid type for 'tool_choice': expected one of an object or 'none', 'auto', or 'required', but got an integer instead."],
    ['truncation as an object', { model: 'sim-chat', input: 'x', truncation: { a: 1 } }, 'truncation', 'invalid_type', "Invalid type for 'truncation': expected one of 'auto' or 'disabled', but got an object instead."],
    // out-of-range numbers
    ['temperature above 2', { model: 'sim-chat', input: 'x', temperature: 2.1 }, 'temperature', 'decimal_above_max_value', "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 2.1 instead."],
    ['temperature below 0', { model: 'sim-chat', input: 'x', temperature: -2.5 }, 'temperature', 'decimal_below_min_value', "Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got -2.5 instead."],
    ['top_p above 1', { model: 'sim-chat', input: 'x', top_p: 1.5 }, 'top_p', 'decimal_above_max_value', "Invalid 'top_p': decimal above maximum value. Expected a value <= 1, but got 1.5 instead."],
    ['max_output_tokens below 16', { model: 'sim-chat', input: 'x', max_output_tokens: 10 }, 'max_output_tokens', 'integer_below_min_value', "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 10 instead."],
    // OpenAI's minimum of 1 (llamastack/llama-stack pull request 4062 recorded its API refusing 0)
    ['max_tool_calls 0', { model: 'sim-chat', input: 'x', max_tool_calls: 0 }, 'max_tool_calls', 'integer_below_min_value', "Invalid 'max_tool_calls': integer below minimum value. Expected a value >= 1, but got 0 instead."],
    ['top_logprobs above 20', { model: 'sim-chat', input: 'x', top_logprobs: 21 }, 'top_logprobs', 'integer_above_max_value', "Invalid 'top_logprobs': integer above maximum value. Expected a value <= 20, but got 21 instead."],
    // unknown enum values
    ['truncation unknown', { model: 'sim-chat', input: 'x', truncation: 'bogus' }, 'truncation', 'invalid_value', "Invalid value: 'bogus'. Supported values are: 'auto' and 'disabled'."],
    ['reasoning.effort unknown', { model: 'sim-chat', input: 'x', reasoning: { effort: 'bogus' } }, 'reasoning.effort', 'invalid_value', "Invalid value: 'bogus'. Supported values are: 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', and 'max'."],
    ['text.format.type unknown', { model: 'sim-chat', input: 'x', text: { format: { type: 'bogus' } } }, 'text.format.type', 'invalid_value', "Invalid value: 'bogus'. Supported values are: 'json_object', 'text', and 'json_schema'."],
    ['text.verbosity unknown', { model: 'sim-chat', input: 'x', text: { verbosity: 'bogus' } }, 'text.verbosity', 'invalid_value', "Invalid value: 'bogus'. Supported values are: 'low', 'medium', and 'high'."],
    ['tool_choice unknown', { model: 'sim-chat', input: 'x', tool_choice: 'bogus' }, 'tool_choice', 'invalid_value', "Invalid value: 'bogus'. Supported values are: 'none', 'auto', and 'required'."],
    ['an include value unknown', { model: 'sim-chat', input: 'x', include: ['bogus.thing'] }, 'include[0]', 'invalid_value', "Invalid value: 'bogus.thing'. Supported values are: 'file_search_call.results', 'web_search_call.results', 'web_search_call.action.sources', 'message.input_image.image_url', 'computer_call_output.output.image_url', 'code_interpreter_call.outputs', 'reasoning.encrypted_content', and 'message.output_text.logprobs'."],
    ['a role unknown (named by the item)', { model: 'sim-chat', input: [{ role: 'bogus', content: 'x' }] }, 'input[0]', 'invalid_value', `Invalid value: 'bogus'. Supported values are: ${ROLES}.`],
    ['an empty item (no role)', { model: 'sim-chat', input: [{}] }, 'input[0]', 'invalid_value', `Invalid value: ''. Supported values are: ${ROLES}.`],
    // lengths
    ['metadata with 17 pairs', { model: 'sim-chat', input: 'x', metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata', 'object_above_max_properties', "Invalid 'metadata': too many properties. Expected an object with at most 16 properties, but got an object with 17 properties instead."],
    // names outside OpenAI's function name pattern (^[a-zA-Z0-9_-]+$; on the Responses API at most 128, a json_schema format's 64: openai-name.ts): its words for tools[N].name as its API answers them
    // (openai/openai-dotnet issue 441, justrach/codegraff issue 930), the same for a namespace's member, a tool an item loads and a json_schema format's name
    ['a function tool name with a dot', { model: 'sim-chat', input: 'x', tools: [{ type: 'function', name: 'mcp.read', parameters: {} }] }, 'tools[0].name', 'invalid_value', PATTERN('tools[0].name')],
    ['a function tool name over 128', { model: 'sim-chat', input: 'x', tools: [{ type: 'function', name: 'f'.repeat(129), parameters: {} }] }, 'tools[0].name', 'string_above_max_length', TOO_LONG('tools[0].name', 128)],
    ['a namespace member name with a dot', { model: 'sim-chat', input: 'x', tools: [{ type: 'namespace', name: 'crm', description: 'd', tools: [{ type: 'function', name: 'ok' }, { type: 'function', name: 'get.user' }] }] }, 'tools[0].tools[1].name', 'invalid_value', PATTERN('tools[0].tools[1].name')],
    ['a namespace member name over 128', { model: 'sim-chat', input: 'x', tools: [{ type: 'namespace', name: 'crm', description: 'd', tools: [{ type: 'function', name: 'f'.repeat(129) }] }] }, 'tools[0].tools[0].name', 'string_above_max_length', TOO_LONG('tools[0].tools[0].name', 128)],
    ['an additional_tools item\'s function name over 128', { model: 'sim-chat', input: [{ role: 'user', content: 'x' }, { type: 'additional_tools', role: 'developer', tools: [{ type: 'function', name: 'f'.repeat(129), parameters: {} }] }] }, 'input[1].tools[0].name', 'string_above_max_length', TOO_LONG('input[1].tools[0].name', 128)],
    ['text.format.name over 64 (a format name keeps 64)', { model: 'sim-chat', input: 'x', text: { format: { type: 'json_schema', name: 'f'.repeat(65), schema: {} } } }, 'text.format.name', 'string_above_max_length', TOO_LONG('text.format.name')],
    // OpenAI's ToolSearchToolParam types `parameters` an object or null (vendored document, openai-node ToolSearchTool)
    ['a tool_search tool\'s parameters as a string', { model: 'sim-chat', input: 'x', tools: [{ type: 'tool_search', execution: 'client', parameters: 'x' }] }, 'tools[0].parameters', 'invalid_type', "Invalid type for 'tools[0].parameters': expected an object, but got a string instead."],
    ['a tool_search tool\'s parameters as a list', { model: 'sim-chat', input: 'x', tools: [{ type: 'tool_search', execution: 'client', parameters: [] }] }, 'tools[0].parameters', 'invalid_type', "Invalid type for 'tools[0].parameters': expected an object, but got an array instead."],
    ['a tool_search tool\'s execution unknown', { model: 'sim-chat', input: 'x', tools: [{ type: 'tool_search', execution: 'remote' }] }, 'tools[0].execution', 'invalid_value', "Invalid value: 'remote'. Supported values are: 'server' and 'client'."],
    ['an additional_tools item\'s function name with a space', { model: 'sim-chat', input: [{ role: 'user', content: 'x' }, { type: 'additional_tools', role: 'developer', tools: [{ type: 'function', name: 'get user', parameters: {} }] }] }, 'input[1].tools[0].name', 'invalid_value', PATTERN('input[1].tools[0].name')],
    ['a loaded namespace member name with a slash', { model: 'sim-chat', input: [{ role: 'user', content: 'x' }, { type: 'tool_search_output', execution: 'client', tools: [{ type: 'namespace', name: 'crm', description: 'd', tools: [{ type: 'function', name: 'a/b' }] }] }] }, 'input[1].tools[0].tools[0].name', 'invalid_value', PATTERN('input[1].tools[0].tools[0].name')],
    ['text.format.name with a space', { model: 'sim-chat', input: 'x', text: { format: { type: 'json_schema', name: 'an answer', schema: {} } } }, 'text.format.name', 'invalid_value', PATTERN('text.format.name')],
    ['a configuration_update\'s text.format.name with a dot', { model: 'sim-chat', input: [{ type: 'configuration_update', text: { format: { type: 'json_schema', name: 'answer.v2', schema: {} } } }, { role: 'user', content: 'x' }] }, 'input[0].text.format.name', 'invalid_value', PATTERN('input[0].text.format.name')],
    ['previous_response_id over 64 characters', { model: 'sim-chat', input: 'x', previous_response_id: 'r'.repeat(65) }, 'previous_response_id', 'string_above_max_length', "Invalid 'previous_response_id': string too long. Expected a string with maximum length 64, but got a string with length 65 instead."],
  ];

  for (const [what, json, param, code, message] of cases) {
    it(`${what}: 400 ${code}`, async () => {
      const before = await billedEvents(s.o.org.id);
      for (const path of ['/v1/responses', '/v1/responses/input_tokens']) {
        // input_tokens takes no model and an empty input (it counts nothing)
        if (path.endsWith('input_tokens') && (!('model' in json) || what.startsWith('an empty input'))) continue;
        const r = await post(path, json);
        expect(r.status, `${path} ${r.text}`).to.equal(400);
        expect(r.body.error, path).to.deep.equal({ code, type: 'invalid_request_error', param, message });
      }
      expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
      expect(await billedEvents(s.o.org.id), 'nothing billed').to.equal(before);
    });
  }

  it("an empty model is OpenAI's 400 model_not_found, \"The requested model '' does not exist.\" (it was empty_string); nothing sent", async () => {
    for (const extra of [{}, { stream: true }, { background: true }]) {
      const r = await post('/v1/responses', Object.assign({ model: '', input: 'x' }, extra));
      expect(r.status, r.text).to.equal(400);
      expect(r.body.error).to.deep.equal({ code: 'model_not_found', type: 'invalid_request_error', param: 'model', message: "The requested model '' does not exist." });
    }
    const err = await s.c.responses.create({ model: '', input: 'x' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err).to.include({ status: 400, code: 'model_not_found', param: 'model' });
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
  });

  it('a function name of 128 characters (the Responses API\'s limit) is taken on create and input_tokens, and offered upstream as it is', async () => {
    const name = 'f'.repeat(128);
    const tools = [{ type: 'function', name, parameters: { type: 'object', properties: {} } }];
    const counted = await post('/v1/responses/input_tokens', { model: 'sim-chat', input: 'x', tools });
    expect(counted.status, counted.text).to.equal(200);
    const r = await post('/v1/responses', { model: 'sim-chat', input: 'x', tools });
    expect(r.status, r.text).to.equal(200);
    const sent = env().sim.log.entries.at(-1)!.body as { tools: Array<{ function: { name: string } }> };
    expect(sent.tools.map((t) => t.function.name)).to.deep.equal([name]);
  });

  it('a client tool_search tool with parameters null or an object is taken', async () => {
    for (const parameters of [null, { type: 'object', properties: { query: { type: 'string' } } }]) {
      const r = await post('/v1/responses', { model: 'sim-chat', input: 'x', tools: [{ type: 'tool_search', execution: 'client', description: 'find tools', parameters }] });
      expect(r.status, r.text).to.equal(200);
    }
  });

  it("the SDK's BadRequestError carries OpenAI's code and param", async () => {
    const err = await s.c.responses.create({ model: 'sim-chat', input: 'x', temperature: 'hot' as unknown as number }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err).to.include({ status: 400, code: 'invalid_type', param: 'temperature', type: 'invalid_request_error' });
  });

  it('an unknown top-level field is still accepted and ignored (clients send new ones)', async () => {
    const r = await post('/v1/responses', { model: 'sim-chat', input: 'x', a_field_from_next_year: { x: 1 } });
    expect(r.status, r.text).to.equal(200);
  });
});
