import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { outcome } from '../../helpers/responses-background';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';

const V = { 'anthropic-version': '2023-06-01' };
const tool = (name: string) => ({ name, description: 'a tool', input_schema: { type: 'object', properties: {} } });
const SEARCH = { type: 'web_search_20250305', name: 'web_search' };
const msgs = [{ role: 'user', content: 'hello' }];
const UNIQUE = 'tools: Tool names must be unique.';
const WITHOUT_TOOLS = 'tool_choice may only be specified while providing tools.';
const notFound = (name: string) => `Tool '${name}' not found in provided tools`;

/**
 * Anthropic's refusals of tools and tool_choice that do not fit together (api/routes/messages/schema.ts):
 * two tools of one name, a choice without tools, a `tool` choice naming no tool (unless tools may come
 * from a continued thread, an MCP server or a block in the messages). Each is Anthropic's 400
 * invalid_request_error in its words, on the translated (sim-chat) and the native (sim-claude) upstream,
 * JSON, streamed and on count_tokens, before any upstream, nothing billed; the bodies next to them answer.
 */
describe('messages: tools and tool_choice that do not fit together', function () {
  this.timeout(30_000);
  const s = openaiOrg();
  let h: Record<string, string>;
  before(() => {
    h = { ...keyHeader(s.o.key), ...V };
  });

  const billed = async () => {
    await usageSettled();
    return UsageEvent.count({ where: { orgId: s.o.org.id } });
  };

  function expectAnthropicRefusal(r: Reply, message: string, what: string): void {
    expect(r.status, `${what} ${r.text}`).to.equal(400);
    expect(r.body, what).to.deep.equal({ error: { code: 'invalid_request', message, type: 'invalid_request_error' } });
  }

  it("refuses each mismatch in Anthropic's words on every upstream kind, JSON, streamed and counted; nothing sent or billed", async () => {
    const before = await billed();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ tools: [tool('lookup'), tool('lookup')] }, UNIQUE],
      [{ tools: [tool('web_search'), SEARCH] }, UNIQUE],
      [{ tool_choice: { type: 'auto' } }, WITHOUT_TOOLS],
      [{ tool_choice: { type: 'any' } }, WITHOUT_TOOLS],
      [{ tools: [], tool_choice: { type: 'tool', name: 'lookup' } }, WITHOUT_TOOLS],
      [{ tools: [tool('lookup')], tool_choice: { type: 'tool', name: 'search' } }, notFound('search')],
      [{ tools: [tool('lookup')], tool_choice: { type: 'tool', name: 'Lookup', disable_parallel_tool_use: true } }, notFound('Lookup')],
    ];
    for (const [extra, message] of cases) {
      for (const model of ['sim-chat', 'sim-claude']) {
        for (const stream of [false, true]) {
          const what = `${model} ${JSON.stringify(extra)} stream ${stream}`;
          expectAnthropicRefusal(await call('POST', '/v1/messages', { headers: h, json: { model, max_tokens: 64, messages: msgs, stream, ...extra } }), message, what);
        }
        expectAnthropicRefusal(await call('POST', '/v1/messages/count_tokens', { headers: h, json: { model, messages: msgs, ...extra } }), message, `count_tokens ${model} ${JSON.stringify(extra)}`);
      }
    }
    // the official SDK raises its BadRequestError with Anthropic's type and words
    const client = new Anthropic({ apiKey: s.o.key, baseURL: env().gw.url, maxRetries: 0 });
    const err = await outcome(client.messages.create({ model: 'sim-claude', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], tools: [tool('a'), tool('a')] as Anthropic.Tool[] }));
    expect(err).to.be.instanceOf(Anthropic.BadRequestError);
    expect((err as InstanceType<typeof Anthropic.BadRequestError>).error).to.deep.include({ error: { code: 'invalid_request', message: UNIQUE, type: 'invalid_request_error' } });
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billed(), 'nothing billed').to.equal(before);
  });

  it('a malformed choice keeps its own refusal; none without tools, and a choice naming one of the tools, answer', async () => {
    const nameless = await call('POST', '/v1/messages', { headers: h, json: { model: 'sim-chat', max_tokens: 64, messages: msgs, tool_choice: { type: 'tool' } } });
    expect(nameless.status).to.equal(400);
    expect(nameless.body.error.message).to.include('tool_choice.name');
    for (const model of ['sim-chat', 'sim-claude']) {
      const none = await call('POST', '/v1/messages', { headers: h, json: { model, max_tokens: 64, messages: msgs, tool_choice: { type: 'none' } } });
      expect(none.status, `${model} ${none.text}`).to.equal(200);
      const named = await call('POST', '/v1/messages', { headers: h, json: { model, max_tokens: 64, messages: msgs, tools: [tool('first'), tool('lookup')], tool_choice: { type: 'tool', name: 'lookup' } } });
      expect(named.status, `${model} ${named.text}`).to.equal(200);
    }
    // the native upstream is sent the choice as the caller wrote it
    expect((env().sim.log.entries.at(-1)!.body as { tool_choice?: unknown }).tool_choice).to.deep.equal({ type: 'tool', name: 'lookup' });
    // tools held elsewhere: a continued thread (the SDK's tool runner sends its choice without tools), an MCP server
    for (const extra of [{ mcp_servers: [{ type: 'url', url: 'https://mcp.example', name: 'crm' }], tool_choice: { type: 'tool', name: 'crm_lookup' } }]) {
      const r = await call('POST', '/v1/messages', { headers: h, json: { model: 'sim-claude', max_tokens: 64, messages: msgs, ...extra } });
      expect(r.status, `${JSON.stringify(extra)} ${r.text}`).to.equal(200);
      expect((env().sim.log.entries.at(-1)!.body as { tool_choice?: unknown }).tool_choice).to.deep.equal(extra.tool_choice);
    }
    // a continued thread passes the tool rules; its previous message is the platform's shared workspace's, so it is not found (shared-account-ids.ts)
    const thread = await call('POST', '/v1/messages', { headers: h, json: { model: 'sim-claude', max_tokens: 64, messages: msgs, thread: { type: 'continue', previous_message_id: 'msg_1' }, tool_choice: { type: 'any' } } });
    expect([thread.status, thread.body.error?.message], thread.text).to.deep.equal([404, "thread.previous_message_id: message 'msg_1' not found. Threads are continued only by the organization they were made for, while the gateway keeps their record. Send the whole conversation in messages (a new thread: thread {type: 'create'}, or none)."]);
    const counted = await call('POST', '/v1/messages/count_tokens', { headers: h, json: { model: 'sim-claude', messages: msgs, tools: [tool('lookup')], tool_choice: { type: 'any' } } });
    expect(counted.status, counted.text).to.equal(200);
  });
});
