import { expect } from 'chai';
import { flatFunctions, splitToolName } from '../../../api/dialects/responses/namespaces';
import { responsesToCanonical, type ResponsesRequest } from '../../../api/dialects/responses/request';
import { messagesToCanonical, type MessagesRequest } from '../../../api/dialects/messages/request';
import { ApiError } from '../../../shared/errors/ApiError';

const fn = (name: string, extra: Record<string, unknown> = {}) => ({ type: 'function', name, parameters: { type: 'object' }, ...extra });
const ns = (name: string, tools: Array<Record<string, unknown> & { type: string }>, description = '') => ({ type: 'namespace', name, description, tools });

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

describe('namespace tools (responses)', () => {
  it('flattens members to <namespace>__<name>, keeping both descriptions', () => {
    const out = flatFunctions([ns('crm', [fn('find', { description: 'Find a customer.' }), fn('add')], 'Customer records.'), fn('plain')]);
    expect(out.map((t) => t.name)).to.deep.equal(['crm__find', 'crm__add', 'plain']);
    expect(out[0].description).to.equal('Customer records.\n\nFind a customer.');
    expect(out[1].description).to.equal('Customer records.');
  });

  it('refuses names that collide once flattened, and non-function members', () => {
    refused(() => flatFunctions([ns('a', [fn('b__c')]), ns('a__b', [fn('c')])]), 'invalid_request');
    refused(() => flatFunctions([ns('crm', [fn('find')]), fn('crm__find')]), 'invalid_request');
    refused(() => flatFunctions([ns('crm', [{ type: 'custom', name: 'free' }])]), 'unsupported_tool');
  });

  it('maps a called name back only for a declared member', () => {
    const tools = [ns('crm', [fn('find')]), fn('crm__other')];
    expect(splitToolName(tools, 'crm__find')).to.deep.equal({ name: 'find', namespace: 'crm' });
    expect(splitToolName(tools, 'crm__other')).to.deep.equal({ name: 'crm__other' });
    expect(splitToolName(undefined, 'crm__find')).to.deep.equal({ name: 'crm__find' });
  });

  it('drops a hosted tool search, offers deferred tools, and refuses a client-executed one', () => {
    const req = (tools: unknown[]): ResponsesRequest => ({ model: 'm', input: 'hi', tools: tools as ResponsesRequest['tools'] });
    const { canonical } = responsesToCanonical(req([{ type: 'tool_search' }, fn('late', { defer_loading: true })]));
    expect(canonical.tools!.map((t) => t.function.name)).to.deep.equal(['late']);
    refused(() => responsesToCanonical(req([{ type: 'tool_search', execution: 'client' }])), 'unsupported_tool');
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
