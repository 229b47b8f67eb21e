import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { call, keyHeader } from '../../helpers/http';
import { openaiOrg } from '../../helpers/openai-org';

/**
 * A malformed input item is refused 400 as OpenAI's API refuses it, in its code and words and naming
 * where it is (`param: "input[1].content[0].type"`; a message's role by the item, `input[1]`), on
 * `POST /v1/responses` and `/v1/responses/input_tokens`, before anything is sent upstream; a function
 * call output without its call id or output is refused too (it went upstream as a tool result for a
 * call "undefined"). A part by file id (which the gateway does not keep) is refused in its own words.
 */
describe('responses dialect: a malformed input item is refused naming its place', () => {
  const s = openaiOrg();
  const post = (path: string, json: unknown) => call('POST', path, { headers: keyHeader(s.o.key), json });

  const hi = { role: 'user', content: 'hi' };
  const missing = (param: string): [string, string, string] => [param, 'missing_required_parameter', `Missing required parameter: '${param}'.`];
  const ROLES = "Supported values are: 'assistant', 'system', 'developer', and 'user'.";
  const cases: Array<[string, unknown[], [string, string, string | RegExp]]> = [
    ['a role OpenAI does not have', [hi, { role: 'wizard', content: 'x' }], ['input[1]', 'invalid_value', `Invalid value: 'wizard'. ${ROLES}`]],
    ['a message without its role', [{ type: 'message', content: 'x' }], ['input[0]', 'invalid_value', `Invalid value: ''. ${ROLES}`]],
    ['a content part of an unknown type', [hi, { role: 'user', content: [{ type: 'input_text', text: 'a' }, { type: 'bogus', text: 'x' }] }], ['input[1].content[1].type', 'invalid_value', /^Invalid value: 'bogus'. Supported values are: 'input_text', /]],
    ['an input_image by file id', [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1' }] }], ['input[0].content[0].file_id', 'invalid_request', /file ids are not supported/]],
    ['an input_file by file id', [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-1' }] }], ['input[0].content[0]', 'invalid_request', /file ids are not supported/]],
    ['an item of an unknown type', [hi, { type: 'bogus_item' }], ['input[1].type', 'invalid_request', /Input item type 'bogus_item' is not supported/]],
    ['a function call output without its call id', [hi, { type: 'function_call_output', output: '42' }], missing('input[1].call_id')],
    ['a function call output without its output', [{ type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1' }], missing('input[1].output')],
    ['a custom tool call output without its call id', [hi, { type: 'custom_tool_call_output', output: 'ok' }], missing('input[1].call_id')],
    ['a custom tool call without its input', [{ type: 'custom_tool_call', call_id: 'c1', name: 'f' }], missing('input[0].input')],
    ['an image in a tool output by file id', [{ type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_image', file_id: 'file-1' }] }], ['input[1].output[0].file_id', 'invalid_request', /file ids are not supported/]],
  ];

  for (const [what, input, [param, code, message]] of cases) {
    it(`${what}: 400 ${code} naming ${param}, nothing sent upstream`, async () => {
      for (const path of ['/v1/responses', '/v1/responses/input_tokens']) {
        const r = await post(path, { model: 'sim-chat', input });
        expect(r.status, `${path} ${r.text}`).to.equal(400);
        expect(r.body.error, path).to.include({ code, type: 'invalid_request_error', param });
        if (typeof message === 'string') expect(r.body.error.message, path).to.equal(message);
        else expect(r.body.error.message, path).to.match(message);
      }
      expect(env().sim.log.entries).to.have.length(0);
    });
  }

  it("a function call output answering no call (none before it in the input, nor in the previous response) is OpenAI's 400 'No tool call found…' naming input, JSON, streamed and background; one answering the previous response's call goes on", async () => {
    const orphan = [{ type: 'function_call_output', call_id: 'call_gone', output: '42' }, hi];
    for (const extra of [{}, { stream: true }, { background: true }]) {
      const r = await post('/v1/responses', Object.assign({ model: 'sim-chat', input: orphan }, extra));
      expect(r.status, `${JSON.stringify(extra)} ${r.text}`).to.equal(400);
      // OpenAI's body: {"message": "No tool call found for function call output with call_id call_….", "type": "invalid_request_error", "param": "input", "code": null}
      expect(r.body.error).to.deep.equal({ code: 'invalid_request', type: 'invalid_request_error', param: 'input', message: 'No tool call found for function call output with call_id call_gone.' });
    }
    // an output before its call is no answer either
    const early = await post('/v1/responses', { model: 'sim-chat', input: [{ type: 'function_call_output', call_id: 'c1', output: '1' }, { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }] });
    expect(early.body.error.message).to.equal('No tool call found for function call output with call_id c1.');
    expect(env().sim.log.entries).to.have.length(0);
    // the tool loop: the call in the previous response, its output in the next request's input
    const tools: OpenAI.Responses.FunctionTool[] = [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { query: { type: 'string' } } }, strict: false }];
    const first = await s.c.responses.create({ model: 'sim-chat', input: 'find cats', tools, tool_choice: 'required' });
    const fc = first.output.find((i) => i.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    const next = await s.c.responses.create({ model: 'sim-chat', previous_response_id: first.id, tools, input: [{ type: 'function_call_output', call_id: fc.call_id, output: '3 cats' }] });
    expect(next.status).to.equal('completed');
  });

  it("a call in the input left without its output is OpenAI's 400 'No tool output found for …' naming input, JSON, streamed and background, nothing sent; answered, it goes on", async () => {
    const fc = (id: string) => ({ type: 'function_call', call_id: id, name: 'f', arguments: '{}' });
    // OpenAI's body: {"message": "No tool output found for function call call_….", "type": "invalid_request_error", "param": "input", "code": null}
    const refused = (message: string) => ({ code: 'invalid_request', type: 'invalid_request_error', param: 'input', message });
    for (const extra of [{}, { stream: true }, { background: true }]) {
      const r = await post('/v1/responses', Object.assign({ model: 'sim-chat', input: [hi, fc('call_open')] }, extra));
      expect(r.status, `${JSON.stringify(extra)} ${r.text}`).to.equal(400);
      expect(r.body.error).to.deep.equal(refused('No tool output found for function call call_open.'));
    }
    // one answered and one not: the one not is named; a custom tool call in OpenAI's words for it
    const two = await post('/v1/responses', { model: 'sim-chat', input: [hi, fc('c1'), fc('c2'), { type: 'function_call_output', call_id: 'c1', output: '1' }] });
    expect(two.body.error).to.deep.equal(refused('No tool output found for function call c2.'));
    const custom = await post('/v1/responses', { model: 'sim-chat', input: [hi, { type: 'custom_tool_call', call_id: 'cc1', name: 'g', input: 'x' }, hi] });
    expect(custom.body.error).to.deep.equal(refused('No tool output found for custom tool call cc1.'));
    expect(env().sim.log.entries, 'nothing sent').to.have.length(0);
    const stateless = await post('/v1/responses', { model: 'sim-chat', input: [hi, fc('c3'), { type: 'function_call_output', call_id: 'c3', output: '3' }] });
    expect(stateless.status, stateless.text).to.equal(200);
  });

  it("the previous response's call with no output in the follow-up is OpenAI's 400 'No tool output found for function call X.', JSON, streamed and background, nothing sent; answered, it goes on", async () => {
    const refused = (message: string) => ({ code: 'invalid_request', type: 'invalid_request_error', param: 'input', message });
    // the previous response's call: a follow-up that brings no output for it is refused (it went upstream with the call unanswered)
    const tools: OpenAI.Responses.FunctionTool[] = [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { query: { type: 'string' } } }, strict: false }];
    const first = await s.c.responses.create({ model: 'sim-chat', input: 'find cats', tools, tool_choice: 'required' });
    const call1 = first.output.find((i) => i.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    const sent = env().sim.log.entries.length;
    for (const extra of [{}, { stream: true }, { background: true }]) {
      const r = await post('/v1/responses', Object.assign({ model: 'sim-chat', previous_response_id: first.id, tools, input: 'never mind, and dogs?' }, extra));
      expect(r.status, `${JSON.stringify(extra)} ${r.text}`).to.equal(400);
      expect(r.body.error).to.deep.equal(refused(`No tool output found for function call ${call1.call_id}.`));
    }
    const err = await s.c.responses.create({ model: 'sim-chat', previous_response_id: first.id, tools, input: 'x' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(env().sim.log.entries, 'nothing sent').to.have.length(sent);
    // answered, in the input after the call or by the follow-up, it goes on
    const next = await s.c.responses.create({ model: 'sim-chat', previous_response_id: first.id, tools, input: [{ type: 'function_call_output', call_id: call1.call_id, output: '3 cats' }, { role: 'user', content: 'and dogs?' }] });
    expect(next.status).to.equal('completed');
  });

  it("a shell or local shell call left without its output is OpenAI's 400 'No tool output found for shell call X.' / '… local shell call X.', nothing sent; answered, it goes on", async () => {
    // OpenAI's body (openai/openai-agents-python pull request 1855): {"message": "No tool output found for local shell call call_….", "type": "invalid_request_error", "param": "input", "code": null}
    const refused = (message: string) => ({ code: 'invalid_request', type: 'invalid_request_error', param: 'input', message });
    const shell = { type: 'shell_call', call_id: 'call_sh', action: { commands: ['ls'] }, status: 'completed' };
    const local = { type: 'local_shell_call', id: 'lsh_1', call_id: 'call_lsh', action: { type: 'exec', command: ['ls'], env: {} }, status: 'completed' };
    const cases: Array<[unknown, unknown, unknown, string]> = [
      [{ type: 'shell' }, shell, { type: 'shell_call_output', call_id: 'call_sh', output: [{ stdout: 'a.txt', stderr: '', outcome: { type: 'exit', exit_code: 0 } }] }, 'No tool output found for shell call call_sh.'],
      [{ type: 'local_shell' }, local, { type: 'local_shell_call_output', call_id: 'call_lsh', output: 'a.txt' }, 'No tool output found for local shell call call_lsh.'],
    ];
    for (const [tool, callItem, output, message] of cases) {
      const sent = env().sim.log.entries.length;
      const r = await post('/v1/responses', { model: 'sim-chat', tools: [tool], input: [hi, callItem] });
      expect(r.status, r.text).to.equal(400);
      expect(r.body.error).to.deep.equal(refused(message));
      expect(env().sim.log.entries, 'nothing sent').to.have.length(sent);
      const ok = await post('/v1/responses', { model: 'sim-chat', tools: [tool], input: [hi, callItem, output] });
      expect(ok.status, ok.text).to.equal(200);
    }
  });

  it("POST /v1/responses/compact refuses a call left without its output as POST /v1/responses does (in the input, or the previous response's), nothing summarised or billed; answered, it compacts", async () => {
    const refused = (message: string) => ({ code: 'invalid_request', type: 'invalid_request_error', param: 'input', message });
    const fc = { type: 'function_call', call_id: 'call_c', name: 'f', arguments: '{}' };
    const r = await post('/v1/responses/compact', { model: 'sim-chat', input: [hi, fc] });
    expect(r.status, r.text).to.equal(400);
    expect(r.body.error).to.deep.equal(refused('No tool output found for function call call_c.'));
    expect(env().sim.log.entries, 'nothing summarised').to.have.length(0);
    // openai/openai-agents-python issue 2317: `responses.compact` of a previous response whose call has no output yet
    const tools: OpenAI.Responses.FunctionTool[] = [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { query: { type: 'string' } } }, strict: false }];
    const first = await s.c.responses.create({ model: 'sim-chat', input: 'find cats', tools, tool_choice: 'required' });
    const call1 = first.output.find((i) => i.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    const sent = env().sim.log.entries.length;
    const carried = await post('/v1/responses/compact', { model: 'sim-chat', previous_response_id: first.id });
    expect(carried.status, carried.text).to.equal(400);
    expect(carried.body.error).to.deep.equal(refused(`No tool output found for function call ${call1.call_id}.`));
    expect(env().sim.log.entries, 'nothing summarised').to.have.length(sent);
    const ok = await post('/v1/responses/compact', { model: 'sim-chat', input: [hi, fc, { type: 'function_call_output', call_id: 'call_c', output: '1' }] });
    expect(ok.status, ok.text).to.equal(200);
    expect(ok.body.object).to.equal('response.compaction');
  });

  it("the SDK's BadRequestError carries the param", async () => {
    const input = [hi, { role: 'user', content: [{ type: 'bogus', text: 'x' }] }] as unknown as OpenAI.Responses.ResponseInput;
    const err = await s.c.responses.create({ model: 'sim-chat', input }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal('input[1].content[0].type');
  });

  it("metadata as OpenAI bounds it: a key over 64 characters is named as too long (it was 'not allowed'), 17 pairs or a value over 512 refused", async () => {
    const key = 'k'.repeat(65);
    const cases: Array<[unknown, string, string, RegExp]> = [
      [{ [key]: 'v' }, `metadata.${key}`, 'invalid_request', /'metadata' keys are at most 64 characters: 'k{65}' is longer/],
      // OpenAI's codes and words for the other two
      [Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])), 'metadata', 'object_above_max_properties', /^Invalid 'metadata': too many properties. Expected an object with at most 16 properties, but got an object with 17 properties instead.$/],
      [{ k: 'v'.repeat(513) }, 'metadata.k', 'string_above_max_length', /^Invalid 'metadata.k': string too long. Expected a string with maximum length 512, but got a string with length 513 instead.$/],
    ];
    for (const [metadata, param, code, message] of cases) {
      const r = await post('/v1/responses', { model: 'sim-chat', input: 'x', metadata });
      expect(r.status, r.text).to.equal(400);
      expect(r.body.error).to.include({ code, param });
      expect(r.body.error.message).to.match(message);
    }
    const ok = await post('/v1/responses', { model: 'sim-chat', input: 'x', metadata: { ['k'.repeat(64)]: 'v'.repeat(512) } });
    expect(ok.status, ok.text).to.equal(200);
  });

  it('a conversation item is checked the same way, named by its place in items', async () => {
    const conv = await post('/v1/conversations', {});
    expect(conv.status, conv.text).to.equal(200);
    const r = await post(`/v1/conversations/${conv.body.id}/items`, { items: [hi, { type: 'function_call_output', output: 'x' }] });
    expect(r.status, r.text).to.equal(400);
    expect(r.body.error).to.include({ code: 'invalid_request', param: 'items[1].call_id' });
  });
});
