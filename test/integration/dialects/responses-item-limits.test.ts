import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { call, keyHeader } from '../../helpers/http';
import { openaiOrg } from '../../helpers/openai-org';
import { billedEvents } from '../../helpers/usage';

/**
 * What the vendored OpenAPI document requires of an input item's fields and the gateway did not hold
 * to: an `additional_tools` item's `role` (AdditionalToolsItemParam: required, `developer` only), the
 * lengths of a `call_id` (64: FunctionCallOutputItemParam and the shell, apply patch, tool search and
 * computer items' params) and of a function call output's `name` (1 to 128), `namespace` (1 to 64,
 * ^[a-zA-Z0-9_-]+$) and `output` (10485760). Refused 400 in OpenAI's codes and words naming the field,
 * on `POST /v1/responses` and `input_tokens`, nothing sent or billed; before, they were sent upstream.
 */
describe('responses dialect: input item fields held to the limits OpenAI documents', function () {
  this.timeout(30_000);
  const s = openaiOrg();
  const post = (path: string, json: unknown) => call('POST', path, { headers: keyHeader(s.o.key), json });
  const hi = { role: 'user', content: 'hi' };
  const tools = [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } }];
  const called = { type: 'function_call', call_id: 'c1', name: 'lookup', arguments: '{}' };
  const output = (extra: Record<string, unknown>) => ({ type: 'function_call_output', call_id: 'c1', output: '42', ...extra });
  const tooLong = (param: string, max: number, got: number): [string, string, string] => [
    param,
    'string_above_max_length',
    `Invalid '${param}': string too long. Expected a string with maximum length ${max}, but got a string with length ${got} instead.`,
  ];

  const cases: Array<[string, unknown[], [string, string, string]]> = [
    ['an additional_tools item without its role', [{ type: 'additional_tools', tools }, hi], ['input[0].role', 'missing_required_parameter', "Missing required parameter: 'input[0].role'."]],
    ["an additional_tools item of role 'user'", [{ type: 'additional_tools', role: 'user', tools }, hi], ['input[0].role', 'invalid_value', "Invalid value: 'user'. Supported values are: 'developer'."]],
    ['a function call output whose call_id is over 64', [hi, { ...called, call_id: 'c'.repeat(65) }, output({ call_id: 'c'.repeat(65) })], tooLong('input[2].call_id', 64, 65)],
    ['a function call output whose name is over 128', [hi, called, output({ name: 'n'.repeat(129) })], tooLong('input[2].name', 128, 129)],
    ['a function call output with an empty name', [hi, called, output({ name: '' })], ['input[2].name', 'empty_string', "Invalid 'input[2].name': empty string. Expected a string with minimum length 1, but got an empty string instead."]],
    ['a function call output whose namespace is over 64', [hi, called, output({ namespace: 'a'.repeat(65) })], tooLong('input[2].namespace', 64, 65)],
    [
      'a function call output whose namespace has a space',
      [hi, called, output({ namespace: 'my tools' })],
      ['input[2].namespace', 'invalid_value', "Invalid 'input[2].namespace': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."],
    ],
    ['a function call output over 10485760 characters', [hi, called, output({ output: 'x'.repeat(10_485_761) })], tooLong('input[2].output', 10_485_760, 10_485_761)],
    ["a function call output's text part over 10485760", [hi, called, output({ output: [{ type: 'input_text', text: 'x'.repeat(10_485_761) }] })], tooLong('input[2].output[0].text', 10_485_760, 10_485_761)],
    ['a shell call output whose call_id is over 64', [hi, { type: 'shell_call_output', call_id: 's'.repeat(65), output: [] }], tooLong('input[1].call_id', 64, 65)],
    ['a tool search output whose call_id is over 64', [hi, { type: 'tool_search_output', call_id: 't'.repeat(65), tools }], tooLong('input[1].call_id', 64, 65)],
  ];

  for (const [what, input, [param, code, message]] of cases) {
    it(`${what}: 400 ${code} naming ${param}, nothing sent or billed`, async () => {
      const before = await billedEvents(s.o.org.id);
      for (const path of ['/v1/responses', '/v1/responses/input_tokens']) {
        const r = await post(path, { model: 'sim-chat', input });
        expect(r.status, `${path} ${r.text.slice(0, 400)}`).to.equal(400);
        expect(r.body.error, path).to.deep.equal({ type: 'invalid_request_error', code, param, message });
      }
      expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
      expect(await billedEvents(s.o.org.id), 'nothing billed').to.equal(before);
    });
  }

  it("the official client gets a BadRequestError naming the role; an item of role 'developer', and outputs within the limits, are served", async () => {
    const err = await s.c.responses.create({ model: 'sim-chat', input: [{ type: 'additional_tools', role: 'user', tools } as never, hi as never] }).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err).to.deep.include({ status: 400, code: 'invalid_value', param: 'input[0].role' });
    const loaded = await post('/v1/responses', { model: 'sim-chat', input: [{ type: 'additional_tools', role: 'developer', tools }, hi], store: false });
    expect(loaded.status, loaded.text).to.equal(200);
    const id = 'c'.repeat(64);
    const within = [hi, { ...called, call_id: id }, output({ call_id: id, name: 'n'.repeat(128), namespace: 'a'.repeat(64) })];
    const answered = await post('/v1/responses', { model: 'sim-chat', input: within, store: false });
    expect(answered.status, answered.text).to.equal(200);
    expect(env().sim.log.entries).to.have.length(2);
  });
});
