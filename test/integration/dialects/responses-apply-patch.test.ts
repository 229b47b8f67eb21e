import { expect } from 'chai';
import OpenAI from 'openai';
import { chunk, completion, usageChunk } from '../../helpers/scripted-upstream';
import { expectOpenAI, expectResponsesEvent, responsesEventForDocument, withoutNullUser } from '../../helpers/conformance';
import { clientToolSuite, streamTextThenCall } from '../../helpers/client-tools';

/**
 * OpenAI's client-executed `apply_patch` tool (ApplyPatchTool, which Codex CLI sends GPT-5.x models) on
 * a chat model: offered upstream as the function `apply_patch` of the operation's fields, its call
 * answered as an `apply_patch_call` item with `operation`, the client's `apply_patch_call_output` sent
 * back as the call's tool result, JSON, streamed (openai 7's strict ResponseStream) and through
 * previous_response_id.
 */
type Sent = { tools?: Array<{ type: string; function: { name: string; parameters: Record<string, unknown> } }>; tool_choice?: unknown; messages: Array<Record<string, unknown>> };

const diff = '@@\n-hello\n+hello, world\n';
const args = JSON.stringify({ type: 'update_file', path: 'src/hello.txt', diff });
const toolCall = { id: 'call_ap1', type: 'function', function: { name: 'apply_patch', arguments: args } };
const operation = { type: 'update_file', path: 'src/hello.txt', diff };

describe('Responses: the apply_patch tool on a chat model', function () {
  this.timeout(30_000);
  const s = clientToolSuite();

  it('offers apply_patch as a function of the operation and answers its call as an apply_patch_call item (JSON), tool_choice naming it', async () => {
    const { up, model, client } = s;
    up.next.push({ kind: 'json', body: completion({ content: null, tool_calls: [toolCall] }, 'tool_calls') });
    const res = await client.responses.create({ model, input: 'fix the greeting', tools: [{ type: 'apply_patch' }], tool_choice: { type: 'apply_patch' } });
    const sent = up.received[0].body as Sent;
    expect(sent.tools!.map((t) => t.function.name)).to.deep.equal(['apply_patch']);
    const params = sent.tools![0].function.parameters as { properties: Record<string, { enum?: string[] }>; required: string[] };
    expect(params.properties.type.enum).to.deep.equal(['create_file', 'update_file', 'delete_file']);
    expect(params.required).to.include.members(['type', 'path']);
    expect(sent.tool_choice).to.deep.equal({ type: 'function', function: { name: 'apply_patch' } });
    expect(res.output).to.have.length(1);
    const item = res.output[0] as OpenAI.Responses.ResponseApplyPatchToolCall;
    expect(item).to.deep.include({ type: 'apply_patch_call', call_id: 'call_ap1', status: 'completed', operation });
    expect(item.id).to.be.a('string').and.not.equal('');
    expect(res.status).to.equal('completed');
    expectOpenAI('Response', withoutNullUser({ ...res, output_text: undefined })); // OpenAI's document: ApplyPatchToolCall
  });

  it('a delete carries no diff, and allowed_tools may list apply_patch', async () => {
    const { up, model, client } = s;
    const del = { ...toolCall, function: { name: 'apply_patch', arguments: JSON.stringify({ type: 'delete_file', path: 'old.txt', diff: '' }) } };
    up.next.push({ kind: 'json', body: completion({ content: null, tool_calls: [del] }, 'tool_calls') });
    const res = await client.responses.create({ model, input: 'remove old.txt', tools: [{ type: 'apply_patch' }], tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'apply_patch' }] } });
    expect((up.received[0].body as Sent).tool_choice).to.deep.equal({ type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'apply_patch' } }] } });
    expect((res.output[0] as OpenAI.Responses.ResponseApplyPatchToolCall).operation).to.deep.equal({ type: 'delete_file', path: 'old.txt' });
  });

  it('streams the call as output_item.added and output_item.done of an apply_patch_call: the SDK ResponseStream ends with it', async () => {
    const { up, model, client } = s;
    const { final, events, forCall } = await streamTextThenCall(up, client, { model, input: 'fix the greeting', tools: [{ type: 'apply_patch' }] }, toolCall);
    expect(final.output.map((i) => i.type)).to.deep.equal(['message', 'apply_patch_call']);
    const item = final.output[1] as OpenAI.Responses.ResponseApplyPatchToolCall;
    expect(item).to.deep.include({ type: 'apply_patch_call', call_id: 'call_ap1', status: 'completed', operation });
    expect(forCall.map((e) => e.type)).to.deep.equal(['response.output_item.added', 'response.output_item.done']);
    expect((forCall[0] as OpenAI.Responses.ResponseOutputItemAddedEvent).item).to.deep.include({ type: 'apply_patch_call', id: item.id, call_id: 'call_ap1', status: 'in_progress' });
    expect(events.map((e) => e.type)).not.to.include('response.function_call_arguments.delta');
  });

  it('with hosted web_search too (the native-search path): the call is an apply_patch_call, JSON and streamed', async () => {
    const { up, model, client } = s;
    up.otherwise = () => ({ kind: 'json', body: completion({ content: null, tool_calls: [toolCall] }, 'tool_calls') });
    up.next.push({ kind: 'json', body: completion({ content: null, tool_calls: [toolCall] }, 'tool_calls') });
    const tools: OpenAI.Responses.Tool[] = [{ type: 'apply_patch' }, { type: 'web_search' }];
    try {
      const res = await client.responses.create({ model, input: 'fix the greeting', tools });
      expect(res.output.map((i) => i.type)).to.deep.equal(['apply_patch_call']);
      expect(res.output[0]).to.deep.include({ call_id: 'call_ap1', status: 'completed', operation });
      const sent = up.received[0].body as Sent;
      expect(sent.tools!.map((t) => t.function.name)).to.include('apply_patch');
      up.next.push({ kind: 'sse', events: [chunk({ role: 'assistant', tool_calls: [{ index: 0, ...toolCall }] }), chunk({}, 'tool_calls'), usageChunk()] });
      const final = await client.responses.stream({ model, input: 'fix the greeting', tools }).finalResponse();
      expect(final.output.map((i) => i.type)).to.deep.equal(['apply_patch_call']);
      expect(final.output[0]).to.deep.include({ call_id: 'call_ap1', status: 'completed', operation });
    } finally {
      up.otherwise = undefined;
    }
  });

  it('sends the echoed apply_patch_call and its apply_patch_call_output back as the tool call and its result', async () => {
    const { up, model, client } = s;
    up.next.push({ kind: 'json', body: completion({ content: 'Done.' }, 'stop') });
    const res = await client.responses.create({
      model,
      tools: [{ type: 'apply_patch' }],
      input: [
        { role: 'user', content: 'fix the greeting' },
        { type: 'apply_patch_call', call_id: 'call_ap1', status: 'completed', operation: { type: 'update_file', path: 'src/hello.txt', diff } },
        { type: 'apply_patch_call_output', call_id: 'call_ap1', status: 'failed', output: 'context not found' },
      ],
    });
    expect(res.output_text).to.equal('Done.');
    const sent = up.received[0].body as Sent;
    expect(sent.messages.slice(-2)).to.deep.equal([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_ap1', type: 'function', function: { name: 'apply_patch', arguments: args } }] },
      { role: 'tool', tool_call_id: 'call_ap1', content: 'failed: context not found' },
    ]);
    const items = await client.responses.inputItems.list(res.id);
    expect(items.data.map((i) => i.type)).to.deep.equal(['apply_patch_call_output', 'apply_patch_call', 'message']);
  });

  it('round-trips through previous_response_id: the stored call and the output the client sends back reach the upstream', async () => {
    const { up, model, client } = s;
    up.next.push({ kind: 'json', body: completion({ content: null, tool_calls: [toolCall] }, 'tool_calls') });
    const first = await client.responses.create({ model, input: 'fix the greeting', tools: [{ type: 'apply_patch' }] });
    const call = first.output[0] as OpenAI.Responses.ResponseApplyPatchToolCall;
    const stored = await client.responses.retrieve(first.id);
    expect(stored.output[0]).to.deep.equal(call);

    up.next.push({
      kind: 'sse',
      events: [chunk({ role: 'assistant', content: 'Patched.' }), chunk({}, 'stop'), usageChunk()],
    });
    const second = await client.responses
      .stream({ model, previous_response_id: first.id, tools: [{ type: 'apply_patch' }], input: [{ type: 'apply_patch_call_output', call_id: call.call_id, status: 'completed', output: 'Updated src/hello.txt' }] })
      .finalResponse();
    expect(second.output_text).to.equal('Patched.');
    const sent = up.received[1].body as Sent;
    expect(sent.messages.slice(-3)).to.deep.equal([
      { role: 'user', content: 'fix the greeting' },
      { role: 'assistant', content: null, tool_calls: [toolCall] },
      { role: 'tool', tool_call_id: 'call_ap1', content: 'completed: Updated src/hello.txt' },
    ]);
  });
});
