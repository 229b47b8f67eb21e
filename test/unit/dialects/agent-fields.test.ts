import { expect } from 'chai';
import { calledTool, canonicalTool, customInput, offeredTools } from '../../../api/dialects/responses/offered-tools';
import { itemsToMessages, responsesToCanonical, type ResponsesRequest } from '../../../api/dialects/responses/request';
import { functionCallItem } from '../../../api/dialects/responses/response';
import { messagesToCanonical, type MessagesRequest } from '../../../api/dialects/messages/request';
import { ApiError } from '../../../shared/errors/ApiError';

type Tool = Record<string, unknown> & { type: string };
const fn = (name: string, extra: Record<string, unknown> = {}): Tool => ({ type: 'function', name, parameters: { type: 'object' }, ...extra });
const ns = (name: string, tools: Tool[], description = ''): Tool => ({ type: 'namespace', name, description, tools });
const patch: Tool = { type: 'custom', name: 'apply_patch', description: 'Edit files.', format: { type: 'grammar', syntax: 'lark', definition: 'start: "x"' } };
const clientSearch: Tool = { type: 'tool_search', execution: 'client', description: 'Find tools.', parameters: { type: 'object', properties: { query: { type: 'string' } } } };
const call = (name: string, args: string) => ({ id: 'call_1', type: 'function' as const, function: { name, arguments: args } });

function refused(f: () => unknown, code: string): void {
  try {
    f();
  } catch (e) {
    expect(e).to.be.instanceOf(ApiError);
    expect((e as ApiError).code).to.equal(code);
    return;
  }
  expect.fail('expected a refusal');
}

describe('responses tools an upstream of flat functions is offered', () => {
  it('flattens namespace members to <namespace>__<name>, keeping both descriptions', () => {
    const out = offeredTools({ tools: [ns('crm', [fn('find', { description: 'Find a customer.' }), fn('add')], 'Customer records.'), fn('plain')] }).map(canonicalTool);
    expect(out.map((t) => t.function.name)).to.deep.equal(['crm__find', 'crm__add', 'plain']);
    expect(out[0].function.description).to.equal('Customer records.\n\nFind a customer.');
    expect(out[1].function.description).to.equal('Customer records.');
  });

  it('refuses names that collide once flattened, and members that are not function or custom tools', () => {
    refused(() => offeredTools({ tools: [ns('a', [fn('b__c')]), ns('a__b', [fn('c')])] }), 'invalid_request');
    refused(() => offeredTools({ tools: [ns('crm', [fn('find')]), fn('crm__find')] }), 'invalid_request');
    refused(() => offeredTools({ tools: [ns('crm', [{ type: 'file_search', name: 'x' }])] }), 'unsupported_tool');
    refused(() => offeredTools({ tools: [{ type: 'code_interpreter' }] }), 'unsupported_tool');
  });

  it('maps a called name back only for a declared tool', () => {
    const req = { tools: [ns('crm', [fn('find'), patch]), fn('crm__other')] };
    expect(calledTool(req, 'crm__find')).to.include({ kind: 'function', name: 'find', namespace: 'crm' });
    expect(calledTool(req, 'crm__apply_patch')).to.include({ kind: 'custom', name: 'apply_patch', namespace: 'crm' });
    expect(calledTool(req, 'crm__other')).to.include({ name: 'crm__other' }).and.not.have.property('namespace');
    expect(calledTool(req, 'web_search')).to.equal(undefined);
  });

  it('offers a custom tool as a function of one string input (grammar in the description) and reports its call as custom_tool_call', () => {
    const [t] = offeredTools({ tools: [patch] }).map(canonicalTool);
    expect(t.function.description).to.equal('Edit files.\n\nThe input must match this lark grammar:\nstart: "x"');
    expect(t.function.parameters).to.deep.include({ required: ['input'] });
    const req = { model: 'm', input: 'x', tools: [patch] } as ResponsesRequest;
    expect(functionCallItem('ctc_1', call('apply_patch', '{"input":"*** Begin Patch"}'), 'completed', req)).to.deep.equal({
      type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_1', name: 'apply_patch', input: '*** Begin Patch', status: 'completed',
    });
    expect(customInput('not json')).to.equal('not json');
    expect(customInput('{"other":1}')).to.equal('{"other":1}');
  });

  it('offers a client tool search as the function tool_search and reports its call as tool_search_call; a hosted one is dropped', () => {
    const req = { model: 'm', input: 'x', tools: [clientSearch, fn('late', { defer_loading: true })] } as ResponsesRequest;
    expect(responsesToCanonical(req).canonical.tools!.map((t) => [t.function.name, t.function.description])).to.deep.equal([['tool_search', 'Find tools.'], ['late', undefined]]);
    expect(functionCallItem('ts_1', call('tool_search', '{"query":"crm"}'), 'completed', req)).to.deep.equal({
      type: 'tool_search_call', id: 'ts_1', call_id: 'call_1', execution: 'client', arguments: { query: 'crm' }, status: 'completed',
    });
    const hosted = { ...req, tools: [{ type: 'tool_search' }, fn('late', { defer_loading: true })] } as ResponsesRequest;
    expect(responsesToCanonical(hosted).canonical.tools!.map((t) => t.function.name)).to.deep.equal(['late']);
  });

  it('sends echoed custom and tool-search calls back as tool calls, and offers what a client search loaded', () => {
    const input = [
      { type: 'message', role: 'user', content: 'go' },
      { type: 'tool_search_call', call_id: 'ts_1', execution: 'client', arguments: { query: 'crm' }, status: 'completed' },
      { type: 'tool_search_output', call_id: 'ts_1', execution: 'client', status: 'completed', tools: [ns('crm', [fn('find')])] },
      { type: 'custom_tool_call', call_id: 'c_1', name: 'apply_patch', input: '*** Begin Patch' },
      { type: 'custom_tool_call_output', call_id: 'c_1', output: [{ type: 'input_text', text: 'done' }] },
    ];
    expect(itemsToMessages(input)).to.deep.equal([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'ts_1', type: 'function', function: { name: 'tool_search', arguments: '{"query":"crm"}' } }] },
      { role: 'tool', tool_call_id: 'ts_1', content: 'Tools loaded: crm__find' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c_1', type: 'function', function: { name: 'apply_patch', arguments: '{"input":"*** Begin Patch"}' } }] },
      { role: 'tool', tool_call_id: 'c_1', content: 'done' },
    ]);
    const req = { model: 'm', input, tools: [clientSearch, patch] } as ResponsesRequest;
    expect(responsesToCanonical(req).canonical.tools!.map((t) => t.function.name)).to.deep.equal(['tool_search', 'apply_patch', 'crm__find']);
  });
});

describe('system-role messages (messages)', () => {
  it('fold into the system prompt in order, string or text blocks, and leave the turns alone', () => {
    const req: MessagesRequest = {
      model: 'm',
      max_tokens: 10,
      system: 'Top.',
      messages: [
        { role: 'system', content: 'First.' },
        { role: 'user', content: 'hi' },
        { role: 'system', content: [{ type: 'text', text: 'Second.' }] },
        { role: 'assistant', content: 'hello' },
      ],
    };
    expect(messagesToCanonical(req).messages).to.deep.equal([
      { role: 'system', content: 'Top.\n\nFirst.\n\nSecond.' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ]);
    expect(messagesToCanonical({ ...req, system: undefined }).messages[0]).to.deep.equal({ role: 'system', content: 'First.\n\nSecond.' });
  });
});
