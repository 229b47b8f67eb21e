import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';

/**
 * Values nested inside a request's items and blocks (a message's content parts, a tool result's
 * blocks, a `content` document source's blocks, the tools an input item loads, a function call's
 * ids) are checked as the vendors type them: a malformed one is 400 `invalid_request` naming it (on
 * the Responses routes in OpenAI's codes and words: docs/dialects.md, "Validation refusals"),
 * before any lane or upstream is used and with nothing billed. They were read unchecked: a `null`
 * part was a 500 `internal_error`, a text block without `text` reached the upstream as the text
 * "undefined", a function call without `call_id` as a tool call of id "undefined".
 */
const V = { 'anthropic-version': '2023-06-01' };
const msg = (messages: unknown[], model = 'sim-chat') => ({ model, max_tokens: 64, messages });
const call1 = { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} };
const afterCall = (content: unknown[]) => [{ role: 'user', content: 'look it up' }, { role: 'assistant', content: [call1] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content }] }];

describe('nested values of messages and responses requests are validated', () => {
  let o: TestOrg;
  let h: Record<string, string>;
  before(async () => {
    o = await buildOrg(env().redis);
    h = keyHeader(o.key);
  });
  beforeEach(resetSim);

  /** Each case: path, body, message, param, and the code (`invalid_request` unless given: the Responses paths answer OpenAI's). */
  async function refusedUnbilled(cases: Array<[string, unknown, string, string | undefined, string?]>, headers: Record<string, string>): Promise<void> {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    for (const [path, json, message, param, code = 'invalid_request'] of cases) {
      const r = await call('POST', path, { headers, json });
      expect(r.status, `${path} ${JSON.stringify(json)}: ${r.text}`).to.equal(400);
      expect(r.body.error).to.include({ code, type: 'invalid_request_error', message });
      if (param !== undefined) expect(r.body.error.param).to.equal(param);
    }
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
  }

  it('messages: tool result blocks and a content document source\'s blocks (was a 500, or the text "undefined" sent)', async () => {
    const doc = (content: unknown[]) => [{ role: 'user', content: [{ type: 'document', source: { type: 'content', content } }, { type: 'text', text: 'summarise' }] }];
    await refusedUnbilled(
      [
        ['/v1/messages', msg(afterCall([null])), "'messages[2].content[0].content[0]' must be of type object", undefined],
        ['/v1/messages', msg(afterCall([{ type: 'text' }])), "'messages[2].content[0].content[0].text' is required", undefined],
        ['/v1/messages', msg(afterCall([{ type: 'image', source: null }])), "'messages[2].content[0].content[0].source' must be of type object", undefined],
        ['/v1/messages', msg(afterCall([{ type: 'document', source: null }])), "'messages[2].content[0].content[0].source' must be of type object", undefined],
        ['/v1/messages', msg(afterCall([{ type: 'image', source: { type: 'base64', data: 'AAAA' } }])), "'messages[2].content[0].content[0].source.media_type' is required", undefined],
        ['/v1/messages', msg(doc([null])), "'messages[0].content[0].source.content[0]' must be of type object", undefined],
        ['/v1/messages', msg(doc([{ type: 'text', text: 5 }])), "'messages[0].content[0].source.content[0].text' must be a string", undefined],
        ['/v1/messages', msg(doc([{ type: 'tool_use' }])), "'messages[0].content[0].source.content[0].type' must be one of [text, image]", undefined],
        ['/v1/messages', msg(doc([null]), 'sim-claude'), "'messages[0].content[0].source.content[0]' must be of type object", undefined],
        ['/v1/messages/count_tokens', { model: 'sim-chat', messages: afterCall([null]) }, "'messages[2].content[0].content[0]' must be of type object", undefined],
      ],
      Object.assign({}, h, V),
    );
  });

  it("messages: a tool's name as Anthropic's pattern has it (^[a-zA-Z0-9_-]{1,128}$), and a custom tool's input_schema, on every upstream and count_tokens (a translated one took both as given)", async () => {
    const withTools = (tools: unknown[], model = 'sim-chat') => Object.assign(msg([{ role: 'user', content: 'x' }], model), { tools });
    const schema = { type: 'object', properties: {} };
    const pattern = "'tools[0].name' should be 1 to 128 of a-z, A-Z, 0-9, underscores and dashes";
    await refusedUnbilled(
      [
        ['/v1/messages', withTools([{ name: 'caldav.list-events', input_schema: schema }]), pattern, undefined],
        ['/v1/messages', withTools([{ name: 'has space', input_schema: schema }], 'sim-claude'), pattern, undefined],
        ['/v1/messages', withTools([{ name: 'x'.repeat(129), input_schema: schema }]), pattern, undefined],
        ['/v1/messages', withTools([{ name: 'no_schema' }]), "'tools[0].input_schema' is required", undefined],
        ['/v1/messages', withTools([{ name: 'no_schema', type: 'custom' }], 'sim-claude'), "'tools[0].input_schema' is required", undefined],
        ['/v1/messages/count_tokens', { model: 'sim-chat', messages: [{ role: 'user', content: 'x' }], tools: [{ name: 'a/b', input_schema: schema }] }, pattern, undefined],
      ],
      Object.assign({}, h, V),
    );
    const ok = await call('POST', '/v1/messages', { headers: Object.assign({}, h, V), json: withTools([{ name: `mcp__${'x_-'.repeat(41)}`, input_schema: schema }]) });
    expect(ok.status, `128 characters of the pattern: ${ok.text}`).to.equal(200);
  });

  it('messages: well-formed tool result and content source blocks are still answered', async () => {
    const r = await call('POST', '/v1/messages', {
      headers: Object.assign({}, h, V),
      json: msg([...afterCall([{ type: 'text', text: 'sunny' }, { type: 'search_result', source: 'https://x', title: 't', content: [{ type: 'text', text: 'x' }] }]), { role: 'assistant', content: 'ok' }, { role: 'user', content: [{ type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'a note' }] } }, { type: 'text', text: 'and?' }] }]),
    });
    expect(r.status, r.text).to.equal(200);
    const sent = JSON.stringify(env().sim.log.entries[0].body);
    expect(sent).to.include('sunny').and.include('a note').and.not.include('undefined');
  });

  it('responses: message parts, function calls, loaded tools and shell outputs, on every route that reads input items (was a 500, or the id "undefined" sent), in OpenAI\'s codes and words', async () => {
    const r = (input: unknown[]) => ({ model: 'sim-chat', input });
    const missing = (param: string) => [`Missing required parameter: '${param}'.`, param, 'missing_required_parameter'] as const;
    const notObject = (param: string, got: string) => [`Invalid type for '${param}': expected an object, but got ${got} instead.`, param, 'invalid_type'] as const;
    await refusedUnbilled(
      [
        ['/v1/responses', r([{ role: 'user', content: [null] }]), ...notObject('input[0].content[0]', 'null')],
        ['/v1/responses', r([{ type: 'message', role: 'assistant', content: ['hi'] }, { role: 'user', content: 'x' }]), ...notObject('input[0].content[0]', 'a string')],
        ['/v1/responses', r([{ role: 'user', content: [{ type: 'input_text' }] }]), ...missing('input[0].content[0].text')],
        ['/v1/responses', r([{ role: 'user', content: [{ text: 'hi' }] }]), ...missing('input[0].content[0].type')],
        ['/v1/responses', r([{ role: 'user' }]), ...missing('input[0].content')],
        ['/v1/responses', r([{ role: 'user', content: 'x' }, { type: 'function_call', name: 'f', arguments: '{}' }]), ...missing('input[1].call_id')],
        ['/v1/responses', r([{ role: 'user', content: 'x' }, { type: 'function_call', call_id: 'c1', name: 'f', arguments: { a: 1 } }]), "Invalid type for 'input[1].arguments': expected a string, but got an object instead.", 'input[1].arguments', 'invalid_type'],
        ['/v1/responses', r([{ type: 'additional_tools', role: 'developer', tools: [null] }, { role: 'user', content: 'x' }]), ...notObject('input[0].tools[0]', 'null')],
        ['/v1/responses', r([{ type: 'additional_tools', role: 'developer', tools: [{ type: 'function' }] }, { role: 'user', content: 'x' }]), ...missing('input[0].tools[0].name')],
        ['/v1/responses', r([{ type: 'tool_search_output', execution: 'client', call_id: 'c', tools: [null] }]), ...notObject('input[0].tools[0]', 'null')],
        ['/v1/responses', r([{ type: 'shell_call_output', call_id: 'c', output: [null] }]), ...notObject('input[0].output[0]', 'null')],
        ['/v1/responses/input_tokens', r([{ role: 'user', content: [null] }]), ...notObject('input[0].content[0]', 'null')],
        ['/v1/responses/compact', r([{ role: 'user', content: [null] }]), ...notObject('input[0].content[0]', 'null')],
        ['/v1/conversations', { items: [{ role: 'user', content: [null] }] }, "'items[0].content[0]' must be of type object", 'items[0].content[0]'],
      ],
      h,
    );
  });

  it('responses: well-formed items are still answered', async () => {
    const r = await call('POST', '/v1/responses', {
      headers: h,
      json: {
        model: 'sim-chat',
        input: [
          { role: 'user', content: [{ type: 'input_text', text: 'look it up' }] },
          { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '' },
          { type: 'function_call_output', call_id: 'call_1', output: 'found it' },
          { type: 'message', role: 'user', content: '' },
        ],
        tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } }],
      },
    });
    expect(r.status, r.text).to.equal(200);
    const sent = env().sim.log.entries[0].body as { messages: Array<{ tool_call_id?: string; tool_calls?: Array<{ id: string }> }> };
    expect(sent.messages[1].tool_calls![0].id).to.equal('call_1');
    expect(sent.messages[2].tool_call_id).to.equal('call_1');
  });
});
