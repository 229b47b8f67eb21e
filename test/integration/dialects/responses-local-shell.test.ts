import { expect } from 'chai';
import OpenAI from 'openai';
import { chunk, completion, usageChunk } from '../../helpers/scripted-upstream';
import { expectOpenAI, withoutNullUser } from '../../helpers/conformance';
import { clientToolSuite, streamTextThenCall } from '../../helpers/client-tools';

/**
 * OpenAI's older client-executed `local_shell` tool (LocalShellTool, which Codex CLI sends some models)
 * on a chat model: offered upstream as the function `local_shell` of the exec action's fields, its call
 * answered as a `local_shell_call` item with an `exec` action (openai 7.60.0's
 * ResponseOutputItem.LocalShellCall), the client's `local_shell_call_output` sent back as the call's
 * tool result, JSON, streamed (the SDK's ResponseStream) and through previous_response_id.
 */
type Sent = { tools?: Array<{ type: string; function: { name: string; parameters: Record<string, unknown> } }>; tool_choice?: unknown; messages: Array<Record<string, unknown>> };
type LocalShellCall = OpenAI.Responses.ResponseOutputItem.LocalShellCall;

const args = JSON.stringify({ command: ['bash', '-lc', 'ls -la'], working_directory: '/repo', timeout_ms: 10000 });
const toolCall = { id: 'call_ls1', type: 'function', function: { name: 'local_shell', arguments: args } };
const action: LocalShellCall['action'] = { type: 'exec', command: ['bash', '-lc', 'ls -la'], env: {}, working_directory: '/repo', timeout_ms: 10000 };
const output = JSON.stringify({ output: 'total 0\n', metadata: { exit_code: 0, duration_seconds: 0.1 } });

describe('Responses: the local_shell tool on a chat model', function () {
  this.timeout(30_000);
  const s = clientToolSuite();

  it('offers local_shell as a function of the exec action and answers its call as a local_shell_call item (JSON); allowed_tools names it', async () => {
    const { up, model, client } = s;
    up.next.push({ kind: 'json', body: completion({ content: null, tool_calls: [toolCall] }, 'tool_calls') });
    const res = await client.responses.create({ model, input: 'what is here?', tools: [{ type: 'local_shell' }], tool_choice: 'required' });
    const sent = up.received[0].body as Sent;
    expect(sent.tools!.map((t) => t.function.name)).to.deep.equal(['local_shell']);
    const params = sent.tools![0].function.parameters as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(params.properties)).to.deep.equal(['command', 'working_directory', 'timeout_ms']);
    expect(params.required).to.deep.equal(['command']);
    expect(sent.tool_choice).to.equal('required');
    expect(res.output).to.have.length(1);
    const item = res.output[0] as LocalShellCall;
    expect(item).to.deep.equal({ type: 'local_shell_call', id: item.id, call_id: 'call_ls1', status: 'completed', action });
    expect(item.id).to.be.a('string').and.not.equal('');
    expect(res.tools).to.deep.equal([{ type: 'local_shell' }]);

    // one command as a string is an argv of one; no limits: none in the action
    up.next.push({ kind: 'json', body: completion({ content: null, tool_calls: [{ ...toolCall, function: { name: 'local_shell', arguments: '{"command":"ls"}' } }] }, 'tool_calls') });
    const allowed = await client.responses.create({ model, input: 'ls', tools: [{ type: 'local_shell' }], tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'local_shell' }] } });
    expect((up.received[1].body as Sent).tool_choice).to.deep.equal({ type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'local_shell' } }] } });
    expect((allowed.output[0] as LocalShellCall).action).to.deep.equal({ type: 'exec', command: ['ls'], env: {} });
    // OpenAI's document: LocalShellToolCall (its ToolChoiceParam has no {type: 'local_shell'}, refused: tool-choice.test.ts; allowed_tools is the documented way to name it)
    expectOpenAI('Response', withoutNullUser({ ...allowed, output_text: undefined }));
  });

  it('streams the call as output_item.added once its action is known, then output_item.done: the SDK ResponseStream ends with it', async () => {
    const { up, model, client } = s;
    const { final, forCall } = await streamTextThenCall(up, client, { model, input: 'what is here?', tools: [{ type: 'local_shell' }] }, toolCall);
    expect(final.output.map((i) => i.type)).to.deep.equal(['message', 'local_shell_call']);
    const item = final.output[1] as LocalShellCall;
    expect(item).to.deep.include({ type: 'local_shell_call', call_id: 'call_ls1', status: 'completed', action });
    expect(forCall.map((e) => e.type)).to.deep.equal(['response.output_item.added', 'response.output_item.done']);
    expect((forCall[0] as OpenAI.Responses.ResponseOutputItemAddedEvent).item).to.deep.equal({ ...item, status: 'in_progress' });
  });

  it('sends the echoed local_shell_call and its local_shell_call_output (naming the call by id, as the SDK types it) back as the tool call and its result', async () => {
    const { up, model, client } = s;
    up.next.push({ kind: 'json', body: completion({ content: 'Nothing there.' }, 'stop') });
    const res = await client.responses.create({
      model,
      tools: [{ type: 'local_shell' }],
      input: [
        { role: 'user', content: 'what is here?' },
        { type: 'local_shell_call', id: 'lsh_1', call_id: 'call_ls1', status: 'completed', action },
        { type: 'local_shell_call_output', id: 'call_ls1', output },
      ],
    });
    expect(res.output_text).to.equal('Nothing there.');
    const sent = up.received[0].body as Sent;
    expect(sent.messages.slice(-2)).to.deep.equal([
      { role: 'assistant', content: null, tool_calls: [toolCall] },
      { role: 'tool', tool_call_id: 'call_ls1', content: output },
    ]);
  });

  it('round-trips through previous_response_id: the stored call and the output the client sends back reach the upstream', async () => {
    const { up, model, client } = s;
    up.next.push({ kind: 'json', body: completion({ content: null, tool_calls: [toolCall] }, 'tool_calls') });
    const first = await client.responses.create({ model, input: 'what is here?', tools: [{ type: 'local_shell' }] });
    const call = first.output[0] as LocalShellCall;
    expect((await client.responses.retrieve(first.id)).output[0]).to.deep.equal(call);

    up.next.push({ kind: 'sse', events: [chunk({ role: 'assistant', content: 'Nothing there.' }), chunk({}, 'stop'), usageChunk()] });
    const second = await client.responses
      .stream({ model, previous_response_id: first.id, tools: [{ type: 'local_shell' }], input: [{ type: 'local_shell_call_output', id: call.call_id, output }] })
      .finalResponse();
    expect(second.output_text).to.equal('Nothing there.');
    expect((up.received[1].body as Sent).messages.slice(-3)).to.deep.equal([
      { role: 'user', content: 'what is here?' },
      { role: 'assistant', content: null, tool_calls: [toolCall] },
      { role: 'tool', tool_call_id: 'call_ls1', content: output },
    ]);
  });
});
