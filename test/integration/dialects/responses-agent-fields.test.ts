import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';

const params = { type: 'object', properties: { target: { type: 'string' } }, required: ['target'], additionalProperties: false };
const agents = {
  type: 'namespace',
  name: 'multi_agent_v1',
  description: 'Tools for spawning and managing sub-agents.',
  tools: [
    { type: 'function', name: 'close_agent', description: 'Close an agent.', strict: false, parameters: params },
    { type: 'function', name: 'spawn_agent', description: 'Spawn an agent.', strict: false, parameters: params, defer_loading: true },
  ],
};
const exec = { type: 'function', name: 'exec_command', description: 'Runs a command.', strict: false, parameters: params };
/** What Codex adds for a model it knows (captured with model = "gpt-5.5"): a free-form tool and a client tool search. */
const applyPatch = { type: 'custom', name: 'apply_patch', description: 'Edit files.', format: { type: 'grammar', syntax: 'lark', definition: 'start: begin_patch hunk+ end_patch' } };
const toolSearch = {
  type: 'tool_search',
  execution: 'client',
  description: '# Tool discovery',
  parameters: { type: 'object', properties: { limit: { type: 'number' }, query: { type: 'string' } }, required: ['query'], additionalProperties: false },
};

/** The fields Codex CLI 0.169 sends (captured from `codex exec`, trimmed), plus a hosted tool search. */
const codex = (model: string, prompt: string, extra: Record<string, unknown> = {}) => ({
  model,
  instructions: '',
  input: [
    { type: 'message', id: 'msg_1', role: 'developer', content: [{ type: 'input_text', text: 'You are a coding agent.' }] },
    { type: 'message', id: 'msg_2', role: 'user', content: [{ type: 'input_text', text: prompt }] },
  ],
  tools: [agents, exec, { type: 'tool_search', execution: 'server' }],
  tool_choice: 'auto',
  parallel_tool_calls: true,
  reasoning: { summary: 'auto' },
  store: false,
  include: ['reasoning.encrypted_content'],
  prompt_cache_key: '01a212db-104d-7273-acc6-390fd263a2c9',
  client_metadata: { session_id: 's1', 'x-codex-window-id': 'w:0' },
  user: '',
  ...extra,
});

type Sent = { messages: Array<Record<string, unknown>>; tools?: Array<{ function: { name: string; description?: string } }>; user?: string };
const sentNames = (b: Sent) => (b.tools ?? []).map((t) => t.function.name);

describe('responses dialect: the fields coding agents send', () => {
  let o: TestOrg;
  let h: Record<string, string>;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    h = keyHeader(o.key);
  });

  it('accepts the request; namespaces go upstream as prefixed functions, developer messages as system, an empty user is not sent', async () => {
    const r = await call('POST', '/v1/responses', { headers: h, json: codex('sim-chat', 'say hello codex') });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.output[0].content[0].text).to.include('say hello codex');
    const sent = env().sim.log.entries[0].body as Sent & Record<string, unknown>;
    expect(sentNames(sent)).to.deep.equal(['multi_agent_v1__close_agent', 'multi_agent_v1__spawn_agent', 'exec_command']);
    expect(sent.tools![0].function.description).to.equal('Tools for spawning and managing sub-agents.\n\nClose an agent.');
    expect(sent.messages.map((m) => m.role)).to.deep.equal(['system', 'user']);
    for (const k of ['user', 'prompt_cache_key', 'client_metadata', 'include', 'reasoning', 'reasoning_effort']) expect(sent, k).not.to.have.property(k);
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: r.headers.get('x-service-request-id')! } })).to.equal(1);
  });

  it('maps reasoning.effort to reasoning_effort', async () => {
    const r = await call('POST', '/v1/responses', { headers: h, json: codex('sim-chat', 'hi', { reasoning: { effort: 'low', summary: 'auto' } }) });
    expect(r.status, r.text).to.equal(200);
    expect((env().sim.log.entries[0].body as Record<string, unknown>).reasoning_effort).to.equal('low');
    expect(r.body.reasoning, 'the Response echoes the request\'s reasoning settings').to.deep.equal({ effort: 'low', summary: 'auto' });
    const plain = await call('POST', '/v1/responses', { headers: h, json: codex('sim-chat', 'hi', { reasoning: undefined }) });
    expect(plain.body.reasoning, 'none asked: nulls').to.deep.equal({ effort: null, summary: null });
  });

  for (const model of ['sim-chat', 'sim-claude']) {
    it(`reports a call of a namespace member as {name, namespace}, JSON and streamed, on ${model}`, async () => {
      const r = await call('POST', '/v1/responses', { headers: h, json: codex(model, 'use a tool please') });
      expect(r.status, r.text).to.equal(200);
      const [fc] = r.body.output;
      expect(fc).to.include({ type: 'function_call', name: 'close_agent', namespace: 'multi_agent_v1', status: 'completed' });

      const s = await postSse('/v1/responses', h, codex(model, 'use a tool please', { stream: true }));
      expect(s.status, s.text).to.equal(200);
      const of = (type: string) => s.events.filter((e) => e.data.type === type).map((e) => e.data);
      expect(of('response.output_item.added')[0].item).to.include({ type: 'function_call', name: 'close_agent', namespace: 'multi_agent_v1' });
      expect(of('response.function_call_arguments.done')[0].name).to.equal('close_agent');
      expect(of('response.output_item.done')[0].item).to.include({ name: 'close_agent', namespace: 'multi_agent_v1' });
      expect(of('response.completed')[0].response.output[0]).to.include({ name: 'close_agent', namespace: 'multi_agent_v1' });
    });
  }

  it('sends an echoed namespace call back upstream under its prefixed name', async () => {
    const input = [
      ...codex('sim-chat', 'close it').input,
      { type: 'function_call', call_id: 'call_1', namespace: 'multi_agent_v1', name: 'close_agent', arguments: '{"target":"a1"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'closed' },
      { type: 'tool_search_call', call_id: 'ts_1', execution: 'server', arguments: { query: 'agents' }, status: 'completed' },
      { type: 'tool_search_output', call_id: 'ts_1', execution: 'server', tools: [], status: 'completed' },
    ];
    const r = await call('POST', '/v1/responses', { headers: h, json: codex('sim-chat', '', { input }) });
    expect(r.status, r.text).to.equal(200);
    const sent = env().sim.log.entries[0].body as Sent;
    const assistant = sent.messages.find((m) => m.role === 'assistant') as { tool_calls: Array<{ function: { name: string } }> };
    expect(assistant.tool_calls[0].function.name).to.equal('multi_agent_v1__close_agent');
    expect(sent.messages.at(-1)).to.deep.include({ role: 'tool', tool_call_id: 'call_1', content: 'closed' });
  });

  it("the hosted web_search tool as Codex sends it (external_web_access: false): searches are offered, page opening is not; namespaces still map back", async () => {
    const r = await call('POST', '/v1/responses', {
      headers: h,
      json: codex('sim-chat', 'use a tool please', { tools: [agents, exec, { type: 'web_search', external_web_access: false }] }),
    });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.output[0]).to.include({ type: 'function_call', name: 'close_agent', namespace: 'multi_agent_v1' });
    const names = sentNames(env().sim.log.entries[0].body as Sent);
    expect(names).to.include.members(['multi_agent_v1__close_agent', 'exec_command', 'web_search']);
    expect(names).not.to.include('web_fetch');
  });

  for (const [label, extraTools] of [
    ['', []],
    [' (with hosted web_search: the native-search path)', [{ type: 'web_search', external_web_access: false, search_content_types: ['text', 'image'] }]],
  ] as const) {
    it(`reports a custom tool's call as custom_tool_call and a client tool search's as tool_search_call, JSON and streamed${label}`, async () => {
      const extra = { reasoning: { effort: 'medium' }, text: { verbosity: 'low' } };
      const r = await call('POST', '/v1/responses', { headers: h, json: codex('sim-chat', 'use a tool please', { ...extra, tools: [applyPatch, exec, toolSearch, ...extraTools] }) });
      expect(r.status, r.text).to.equal(200);
      expect(r.body.output[0]).to.include({ type: 'custom_tool_call', name: 'apply_patch', status: 'completed' });
      expect(r.body.output[0].input).to.be.a('string').and.include('use a tool please');
      const sent = env().sim.log.entries[0].body as Sent;
      expect(sentNames(sent).slice(0, 3)).to.deep.equal(['apply_patch', 'exec_command', 'tool_search']);
      expect(sent.tools![0].function.description).to.include('lark grammar');

      const s = await postSse('/v1/responses', h, codex('sim-chat', 'use a tool please', { ...extra, stream: true, tools: [toolSearch, applyPatch, ...extraTools] }));
      expect(s.status, s.text).to.equal(200);
      const types = s.events.map((e) => e.data.type);
      expect(types).not.to.include('response.function_call_arguments.delta');
      const done = s.events.find((e) => e.data.type === 'response.output_item.done')!.data.item;
      expect(done).to.include({ type: 'tool_search_call', execution: 'client', status: 'completed' });
      expect(done.arguments).to.deep.equal({ query: 'use a tool please' });
      expect(s.events.at(-1)!.data.response.output[0]).to.deep.equal(done);

      const c = await postSse('/v1/responses', h, codex('sim-chat', 'use a tool please', { stream: true, tools: [applyPatch, ...extraTools] }));
      const input = c.events.find((e) => e.data.type === 'response.custom_tool_call_input.done')!.data;
      expect(c.events.find((e) => e.data.type === 'response.output_item.done')!.data.item).to.include({ type: 'custom_tool_call', id: input.item_id, input: input.input });
    });
  }

  it('sends echoed custom and tool-search calls back upstream, and offers the tools the client search loaded', async () => {
    const input = [
      ...codex('sim-chat', 'patch it').input,
      { type: 'tool_search_call', call_id: 'ts_1', execution: 'client', arguments: { query: 'agents' }, status: 'completed' },
      { type: 'tool_search_output', call_id: 'ts_1', execution: 'client', status: 'completed', tools: [agents] },
      { type: 'custom_tool_call', call_id: 'ctc_1', name: 'apply_patch', input: '*** Begin Patch' },
      { type: 'custom_tool_call_output', call_id: 'ctc_1', output: 'Done!' },
    ];
    const r = await call('POST', '/v1/responses', { headers: h, json: codex('sim-chat', '', { input, tools: [exec, applyPatch, toolSearch] }) });
    expect(r.status, r.text).to.equal(200);
    const sent = env().sim.log.entries[0].body as Sent;
    expect(sentNames(sent)).to.deep.equal(['exec_command', 'apply_patch', 'tool_search', 'multi_agent_v1__close_agent', 'multi_agent_v1__spawn_agent']);
    const calls = sent.messages.filter((m) => m.role === 'assistant').flatMap((m) => (m as { tool_calls: Array<{ function: unknown }> }).tool_calls.map((c) => c.function));
    expect(calls).to.deep.equal([
      { name: 'tool_search', arguments: '{"query":"agents"}' },
      { name: 'apply_patch', arguments: '{"input":"*** Begin Patch"}' },
    ]);
    expect(sent.messages.filter((m) => m.role === 'tool').map((m) => m.content)).to.deep.equal(['Tools loaded: multi_agent_v1__close_agent, multi_agent_v1__spawn_agent', 'Done!']);
  });

  it('works through the official openai client (namespace tools are in its types)', async () => {
    const client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const res = await client.responses.create({ model: 'sim-chat', input: 'use a tool please', user: '', tools: [agents as OpenAI.Responses.NamespaceTool] });
    const item = res.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(item).to.include({ type: 'function_call', name: 'close_agent', namespace: 'multi_agent_v1' });
  });

  it('refuses what would change the answer, before any upstream call or billing', async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    // a tool the gateway does not run is named by its place in `tools`, as a field at fault is
    const cases: Array<[Record<string, unknown>, string, string?]> = [
      [{ tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }, 'unsupported_tool', 'tools[0].type'],
      [{ tools: [{ ...agents, tools: [{ type: 'file_search', name: 'files' }] }] }, 'unsupported_tool', 'tools[0].tools[0].type'],
      // OpenAI's codes for what its API types otherwise
      [{ tools: [{ type: 'custom', description: 'no name' }] }, 'missing_required_parameter', 'tools[0].name'],
      [{ tools: [{ ...agents, tools: [] }] }, 'empty_array', 'tools[0].tools'],
      [{ tools: [agents, { ...exec, name: 'multi_agent_v1__close_agent' }] }, 'invalid_request'],
      [{ tools: [{ type: 'tool_search', execution: 'elsewhere' }] }, 'invalid_value', 'tools[0].execution'],
      [{ reasoning: { effort: 'extreme' } }, 'invalid_value', 'reasoning.effort'],
    ];
    for (const [extra, code, param] of cases) {
      const r = await call('POST', '/v1/responses', { headers: h, json: codex('sim-chat', 'hi', extra) });
      expect(r.status, `${JSON.stringify(extra)}: ${r.text}`).to.equal(400);
      expect(r.body.error.code).to.equal(code);
      if (param) expect(r.body.error.param).to.equal(param);
      expect(r.text).not.to.match(/\bat \w+ \(/);
    }
    expect(env().sim.log.entries).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before);
  });
});
