import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { outcome } from '../../helpers/responses-background';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';

const V = { 'anthropic-version': '2023-06-01' };
const tools = [{ name: 'lookup', description: 'a tool', input_schema: { type: 'object', properties: {} } }];
const user = { role: 'user', content: 'look it up' };
const use = (id: string) => ({ type: 'tool_use', id, name: 'lookup', input: {} });
const result = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'found' });
const asked = (...ids: string[]) => ({ role: 'assistant', content: [{ type: 'text', text: 'looking' }, ...ids.map(use)] });
const answered = (...blocks: unknown[]) => ({ role: 'user', content: blocks });
const missing = (n: number, ids: string) =>
  `messages.${n}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${ids}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
const unexpected = (n: number, m: number, id: string) =>
  `messages.${n}.content.${m}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;

/**
 * Messages whose tool_use and tool_result blocks do not pair up (api/routes/messages/tool-pairing.ts):
 * Anthropic's 400 invalid_request_error in its words, on the translated (sim-chat) and the native
 * (sim-claude) upstream, JSON and streamed, before any upstream, nothing billed; paired
 * conversations, server tool blocks and a final assistant turn calling a tool still answer.
 */
describe('messages: tool_use and tool_result blocks that do not pair up', function () {
  this.timeout(30_000);
  const s = openaiOrg();
  const post = (json: Record<string, unknown>) => call('POST', '/v1/messages', { headers: { ...keyHeader(s.o.key), ...V }, json });

  function expectRefusal(r: Reply, message: string, what: string): void {
    expect(r.status, `${what} ${r.text}`).to.equal(400);
    expect(r.body, what).to.deep.equal({ error: { code: 'invalid_request', message, type: 'invalid_request_error' } });
  }

  it("refuses each in Anthropic's words on every upstream kind, JSON and streamed; nothing sent or billed", async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: s.o.org.id } });
    const cases: Array<[unknown[], string]> = [
      // a tool_use answered by no tool_result
      [[user, asked('toolu_a'), user], missing(1, 'toolu_a')],
      // two, one answered: the other is named; both unanswered: both, in their order
      [[user, asked('toolu_a', 'toolu_b'), answered(result('toolu_b'))], missing(1, 'toolu_a')],
      [[user, asked('toolu_a', 'toolu_b'), answered({ type: 'text', text: 'no' })], missing(1, 'toolu_a, toolu_b')],
      // consecutive messages of one role are one turn: the calls of two assistant messages, the first unanswered one named
      [[user, asked('toolu_a'), asked('toolu_b'), answered(result('toolu_b'))], missing(1, 'toolu_a')],
      [[user, asked('toolu_a'), { role: 'system', content: 's' }, asked('toolu_b'), answered(result('toolu_a')), answered({ type: 'text', text: 'x' })], missing(3, 'toolu_b')],
      // more of the assistant turn, then a user turn without the result
      [[user, asked('toolu_a'), { role: 'assistant', content: 'done' }, user], missing(1, 'toolu_a')],
      // a tool_result answering nothing: in the first turn, after a turn without tool_use, or naming another id
      [[answered(result('toolu_a'))], unexpected(0, 0, 'toolu_a')],
      [[user, { role: 'assistant', content: 'hi' }, answered({ type: 'text', text: 'x' }, result('toolu_a'))], unexpected(2, 1, 'toolu_a')],
      [[user, asked('toolu_a'), answered(result('toolu_a'), result('toolu_z'))], unexpected(2, 1, 'toolu_z')],
      [[user, asked('toolu_a'), answered(result('toolu_a')), answered(result('toolu_a'), result('toolu_z'))], unexpected(3, 1, 'toolu_z')],
    ];
    for (const [messages, message] of cases) {
      for (const model of ['sim-chat', 'sim-claude']) {
        for (const stream of [false, true]) {
          expectRefusal(await post({ model, max_tokens: 64, messages, tools, stream }), message, `${model} ${JSON.stringify(messages)} stream ${stream}`);
        }
      }
    }
    // the official SDK raises its BadRequestError with Anthropic's type and words
    const client = new Anthropic({ apiKey: s.o.key, baseURL: env().gw.url, maxRetries: 0 });
    const err = await outcome(client.messages.create({ model: 'sim-claude', max_tokens: 64, messages: [user, asked('toolu_a'), user] as Anthropic.MessageParam[], tools: tools as Anthropic.Tool[] }));
    expect(err).to.be.instanceOf(Anthropic.BadRequestError);
    expect((err as InstanceType<typeof Anthropic.BadRequestError>).error).to.deep.include({ error: { code: 'invalid_request', message: missing(1, 'toolu_a'), type: 'invalid_request_error' } });
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: s.o.org.id } }), 'nothing billed').to.equal(before);
  });

  it('answers paired conversations (results in any order, turns combined), server tool blocks, a continued thread and a final assistant turn calling a tool', async () => {
    const bodies: unknown[][] = [
      [user, asked('toolu_a', 'toolu_b'), answered(result('toolu_b'), result('toolu_a'), { type: 'text', text: 'go on' })],
      [user, asked('toolu_a'), answered(result('toolu_a')), { role: 'assistant', content: 'again' }, user, asked('toolu_c'), answered(result('toolu_c'))],
      [user, asked('toolu_a')],
      // consecutive turns of one role combined, results among text
      [user, { role: 'assistant', content: 'calling' }, asked('toolu_a'), asked('toolu_b'), answered(result('toolu_a'), { type: 'text', text: 'and' }), answered(result('toolu_b'))],
    ];
    for (const messages of bodies) {
      for (const model of ['sim-chat', 'sim-claude']) {
        const r = await post({ model, max_tokens: 64, messages, tools });
        expect(r.status, `${model} ${JSON.stringify(messages)} ${r.text}`).to.equal(200);
      }
    }
    // a server tool's use and result are Anthropic's to pair (native upstream)
    const server = [
      user,
      { role: 'assistant', content: [{ type: 'server_tool_use', id: 'srvtoolu_a', name: 'web_search', input: { query: 'x' } }, { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_a', content: [] }, { type: 'text', text: 'found' }] },
      user,
    ];
    const r = await post({ model: 'sim-claude', max_tokens: 64, messages: server, tools: [{ type: 'web_search_20250305', name: 'web_search' }] });
    expect(r.status, r.text).to.equal(200);
    // results opening a continued thread answer calls the server holds (the SDK's tool runner)
    // (they pass the pairing check; the previous message is the platform's shared workspace's: not found, shared-account-ids.ts)
    const thread = await post({ model: 'sim-claude', max_tokens: 64, messages: [answered(result('toolu_held'))], tools, thread: { type: 'continue', previous_message_id: 'msg_1' } });
    expect([thread.status, thread.body.error?.message], thread.text).to.deep.equal([404, "thread.previous_message_id: message 'msg_1' not found. Threads are continued only by the organization they were made for, while the gateway keeps their record. Send the whole conversation in messages (a new thread: thread {type: 'create'}, or none)."]);
    // count_tokens is not checked (no evidence Anthropic refuses there)
    const counted = await call('POST', '/v1/messages/count_tokens', { headers: { ...keyHeader(s.o.key), ...V }, json: { model: 'sim-claude', messages: [user, asked('toolu_a'), user], tools } });
    expect(counted.status, counted.text).to.equal(200);
  });
});
