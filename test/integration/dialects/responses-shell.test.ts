import { expect } from 'chai';
import OpenAI from 'openai';
import { chunk, completion, usageChunk } from '../../helpers/scripted-upstream';
import { expectOpenAI, expectResponsesEvent, responsesEventForDocument, withoutNullUser } from '../../helpers/conformance';
import { clientToolSuite, streamTextThenCall } from '../../helpers/client-tools';

/**
 * OpenAI's client-executed `shell` tool (FunctionShellTool, which Codex CLI sends GPT-5.x models) on a
 * chat model: offered upstream as the function `shell` of the action's fields, its call answered as a
 * `shell_call` item with `action` {commands, timeout_ms, max_output_length}, the client's
 * `shell_call_output` sent back as the call's tool result, JSON, streamed (openai 7's strict
 * ResponseStream) and through previous_response_id.
 */
type Sent = { tools?: Array<{ type: string; function: { name: string; parameters: Record<string, unknown> } }>; tool_choice?: unknown; messages: Array<Record<string, unknown>> };

const args = JSON.stringify({ commands: ['ls -la', 'cat README.md'], timeout_ms: 10000, max_output_length: null });
const toolCall = { id: 'call_sh1', type: 'function', function: { name: 'shell', arguments: args } };
const action = { commands: ['ls -la', 'cat README.md'], timeout_ms: 10000, max_output_length: null };
const output = [
  { stdout: 'total 0\n', stderr: '', outcome: { type: 'exit' as const, exit_code: 0 } },
  { stdout: '', stderr: 'cat: README.md: No such file or directory\n', outcome: { type: 'exit' as const, exit_code: 1 } },
];
const resultText = 'command 1: exit code 0\nstdout:\ntotal 0\n\n\ncommand 2: exit code 1\nstderr:\ncat: README.md: No such file or directory\n';

describe('Responses: the shell tool on a chat model', function () {
  this.timeout(30_000);
  const s = clientToolSuite();

  it('offers shell as a function of the action and answers its call as a shell_call item (JSON), tool_choice naming it', async () => {
    const { up, model, client } = s;
    up.next.push({ kind: 'json', body: completion({ content: null, tool_calls: [toolCall] }, 'tool_calls') });
    const res = await client.responses.create({ model, input: 'what is here?', tools: [{ type: 'shell' }], tool_choice: { type: 'shell' } });
    const sent = up.received[0].body as Sent;
    expect(sent.tools!.map((t) => t.function.name)).to.deep.equal(['shell']);
    const params = sent.tools![0].function.parameters as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(params.properties)).to.deep.equal(['commands', 'timeout_ms', 'max_output_length']);
    expect(params.required).to.deep.equal(['commands']);
    expect(sent.tool_choice).to.deep.equal({ type: 'function', function: { name: 'shell' } });
    expect(res.output).to.have.length(1);
    const item = res.output[0] as OpenAI.Responses.ResponseFunctionShellToolCall;
    expect(item).to.deep.include({ type: 'shell_call', call_id: 'call_sh1', status: 'completed', action, environment: null });
    expect(item.id).to.be.a('string').and.not.equal('');
    expectOpenAI('Response', withoutNullUser({ ...res, output_text: undefined })); // OpenAI's document: FunctionShellCall
  });

  it('refuses a shell in a hosted container (OpenAI runs it), before the upstream is called; a local environment is the client\'s', async () => {
    const { up, model, client } = s;
    const err = await client.responses.create({ model, input: 'ls', tools: [{ type: 'shell', environment: { type: 'container_auto' } }] }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).to.equal('unsupported_tool');
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal('tools[0].environment');
    expect(up.received).to.have.length(0);
    up.next.push({ kind: 'json', body: completion({ content: null, tool_calls: [toolCall] }, 'tool_calls') });
    const res = await client.responses.create({ model, input: 'ls', tools: [{ type: 'shell', environment: { type: 'local' } }] });
    expect(res.output[0].type).to.equal('shell_call');
  });

  it('streams the call as output_item.added, each command as shell_call_command.added/delta/done, output_item.done: the SDK ResponseStream ends with it', async () => {
    const { up, model, client } = s;
    const { final, forCall } = await streamTextThenCall(up, client, { model, input: 'what is here?', tools: [{ type: 'shell' }] }, toolCall);
    expect(final.output.map((i) => i.type)).to.deep.equal(['message', 'shell_call']);
    const item = final.output[1] as OpenAI.Responses.ResponseFunctionShellToolCall;
    expect(item).to.deep.include({ type: 'shell_call', call_id: 'call_sh1', status: 'completed', action });
    expect(forCall.map((e) => e.type)).to.deep.equal([
      'response.output_item.added',
      ...['ls -la', 'cat README.md'].flatMap(() => ['response.shell_call_command.added', 'response.shell_call_command.delta', 'response.shell_call_command.done']),
      'response.output_item.done',
    ]);
    const done = forCall.filter((e) => e.type === 'response.shell_call_command.done') as OpenAI.Responses.ResponseShellCallCommandDoneEvent[];
    expect(done.map((e) => [e.command_index, e.command])).to.deep.equal([[0, 'ls -la'], [1, 'cat README.md']]);
    expect((forCall[0] as OpenAI.Responses.ResponseOutputItemAddedEvent).item).to.deep.include({ type: 'shell_call', id: item.id, status: 'in_progress' });
  });

  it('with hosted web_search too (the native-search path): the call is a shell_call, JSON and streamed with its command events', async () => {
    const { up, model, client } = s;
    up.next.push({ kind: 'json', body: completion({ content: null, tool_calls: [toolCall] }, 'tool_calls') });
    const tools: OpenAI.Responses.Tool[] = [{ type: 'shell' }, { type: 'web_search' }];
    const res = await client.responses.create({ model, input: 'what is here?', tools });
    expect(res.output.map((i) => i.type)).to.deep.equal(['shell_call']);
    expect(res.output[0]).to.deep.include({ call_id: 'call_sh1', status: 'completed', action });
    up.next.push({ kind: 'sse', events: [chunk({ role: 'assistant', tool_calls: [{ index: 0, ...toolCall }] }), chunk({}, 'tool_calls'), usageChunk()] });
    const stream = client.responses.stream({ model, input: 'what is here?', tools });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    stream.on('event', (e) => events.push(e));
    const final = await stream.finalResponse();
    expect(final.output[0]).to.deep.include({ type: 'shell_call', call_id: 'call_sh1', status: 'completed', action });
    expect(events.filter((e) => e.type === 'response.shell_call_command.done').map((e) => (e as OpenAI.Responses.ResponseShellCallCommandDoneEvent).command)).to.deep.equal(action.commands);
    for (const e of events) expectResponsesEvent(responsesEventForDocument(e as unknown as Record<string, unknown>));
  });

  it('sends the echoed shell_call and its shell_call_output back as the tool call and its result', async () => {
    const { up, model, client } = s;
    up.next.push({ kind: 'json', body: completion({ content: 'No README.' }, 'stop') });
    const res = await client.responses.create({
      model,
      tools: [{ type: 'shell' }],
      input: [
        { role: 'user', content: 'what is here?' },
        { type: 'shell_call', call_id: 'call_sh1', status: 'completed', action: { commands: ['ls -la', 'cat README.md'], timeout_ms: 10000 } },
        { type: 'shell_call_output', call_id: 'call_sh1', output },
      ],
    });
    expect(res.output_text).to.equal('No README.');
    const sent = up.received[0].body as Sent;
    expect(sent.messages.slice(-2)).to.deep.equal([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_sh1', type: 'function', function: { name: 'shell', arguments: args } }] },
      { role: 'tool', tool_call_id: 'call_sh1', content: resultText },
    ]);
  });

  it('round-trips through previous_response_id: the stored call and the output the client sends back reach the upstream', async () => {
    const { up, model, client } = s;
    up.next.push({ kind: 'json', body: completion({ content: null, tool_calls: [toolCall] }, 'tool_calls') });
    const first = await client.responses.create({ model, input: 'what is here?', tools: [{ type: 'shell' }] });
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionShellToolCall;
    expect((await client.responses.retrieve(first.id)).output[0]).to.deep.equal(call);

    up.next.push({ kind: 'sse', events: [chunk({ role: 'assistant', content: 'No README.' }), chunk({}, 'stop'), usageChunk()] });
    const second = await client.responses
      .stream({ model, previous_response_id: first.id, tools: [{ type: 'shell' }], input: [{ type: 'shell_call_output', call_id: call.call_id, output }] })
      .finalResponse();
    expect(second.output_text).to.equal('No README.');
    expect((up.received[1].body as Sent).messages.slice(-3)).to.deep.equal([
      { role: 'user', content: 'what is here?' },
      { role: 'assistant', content: null, tool_calls: [toolCall] },
      { role: 'tool', tool_call_id: 'call_sh1', content: resultText },
    ]);
  });
});
