import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { ScriptedUpstream, chunk, completion, usageChunk } from '../../helpers/scripted-upstream';

/** Anthropic's pattern for tool_use ids: it refuses a conversation holding another. */
const TOOL_USE_ID = /^[a-zA-Z0-9_-]+$/;
const tools = [{ name: 'Read', input_schema: { type: 'object' as const } }, { name: 'Bash', input_schema: { type: 'object' as const } }];
const hi = [{ role: 'user' as const, content: 'read it' }];

/**
 * The messages dialect on an OpenAI-compatible upstream whose tool call ids Anthropic would refuse
 * (Kimi's `functions.Read:0`, Ollama's `Bash:12`): the client gets ids of Anthropic's pattern, JSON
 * and streamed, so the conversation can go on with a Claude model (api/dialects/messages/response.ts anthropicToolId).
 */
describe('messages dialect: tool_use ids of an OpenAI-compatible upstream', function () {
  this.timeout(30_000);
  const up = new ScriptedUpstream();
  let client: Anthropic;
  let model: string;
  before(async () => {
    await up.start();
    model = await up.model();
    client = new Anthropic({ apiKey: (await buildOrg(env().redis)).key, baseURL: env().gw.url, maxRetries: 0 });
  });
  after(() => up.close());
  beforeEach(() => up.reset());

  it("gives a call whose id Anthropic would refuse a toolu_ id, JSON and streamed; a valid id is kept; the results go back under the new id", async () => {
    const calls = [
      { id: 'functions.Read:0', type: 'function', function: { name: 'Read', arguments: '{"path":"a"}' } },
      { id: 'call_ok-1', type: 'function', function: { name: 'Bash', arguments: '{}' } },
    ];
    up.next.push({ kind: 'json', body: completion({ content: null, tool_calls: calls }, 'tool_calls') });
    const m = await client.messages.create({ model, max_tokens: 100, tools, messages: hi });
    const ids = m.content.filter((b) => b.type === 'tool_use').map((b) => (b as Anthropic.ToolUseBlock).id);
    expect(ids[0]).to.match(/^toolu_[0-9a-f]{24}$/);
    expect(ids[1]).to.equal('call_ok-1');

    // streamed: the call's chunks (each carrying the upstream's id) stay one block under one id
    up.next.push({
      kind: 'sse',
      events: [
        chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'Bash:12', type: 'function', function: { name: 'Bash', arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 0, id: 'Bash:12', function: { arguments: '{"cmd":' } }] }),
        chunk({ tool_calls: [{ index: 0, id: 'Bash:12', function: { arguments: '"ls"}' } }] }),
        chunk({}, 'tool_calls'),
        usageChunk(),
      ],
    });
    const streamed = await client.messages.stream({ model, max_tokens: 100, tools, messages: hi }).finalMessage();
    expect(streamed.content).to.have.length(1);
    const use = streamed.content[0] as Anthropic.ToolUseBlock;
    expect(use.id).to.match(TOOL_USE_ID).and.to.match(/^toolu_/);
    expect(use.input).to.deep.equal({ cmd: 'ls' });

    // the client answers under the id it got; the upstream is sent that id for the call and its result
    up.next.push({ kind: 'json', body: completion({ content: 'done' }, 'stop') });
    await client.messages.create({ model, max_tokens: 100, tools, messages: [...hi, { role: 'assistant', content: streamed.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'a b' }] }] });
    const sent = up.received.at(-1)!.body.messages as Array<{ role: string; tool_calls?: Array<{ id: string }>; tool_call_id?: string }>;
    expect(sent.find((x) => x.role === 'assistant')!.tool_calls![0].id).to.equal(use.id);
    expect(sent.find((x) => x.role === 'tool')!.tool_call_id).to.equal(use.id);
  });

  it('does the same for a client tool called beside the web search the gateway runs', async () => {
    up.next.push({ kind: 'json', body: completion({ content: null, tool_calls: [{ id: 'functions.Read:0', type: 'function', function: { name: 'Read', arguments: '{}' } }] }, 'tool_calls') });
    const m = await client.messages.create({ model, max_tokens: 100, tools: [...tools, { type: 'web_search_20250305', name: 'web_search' }], messages: hi });
    expect(m.stop_reason).to.equal('tool_use');
    expect((m.content.find((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock).id).to.match(/^toolu_[0-9a-f]{24}$/);
  });
});
