import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { mcpTools } from '@anthropic-ai/sdk/helpers/beta/mcp';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { z as z3 } from 'zod/v3';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';
import { call, keyHeader } from '../../helpers/http';
import { CONSTRUCTS } from '../../helpers/zod-schema-constructs';

const messages = [{ role: 'user' as const, content: 'hello' }];
const INVALID =
  'JSON schema is invalid. It must match JSON Schema draft 2020-12 (https://json-schema.org/draft/2020-12). Learn more about tool use at https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview.';

/** An MCP server with a tool of every construct (zod 4 objects), a zod 3 shape and a tool without arguments, listed by a client. */
async function listedTools(extra: (server: McpServer) => void = () => undefined): Promise<{ client: Client; tools: Tool[] }> {
  const server = new McpServer({ name: 'schemas', version: '1.0.0' });
  const done = async () => ({ content: [{ type: 'text' as const, text: 'done' }] });
  for (const c of CONSTRUCTS) server.registerTool(c.name, { description: c.name, inputSchema: c.schema }, done);
  server.registerTool('zod3_shape', { description: 'zod 3', inputSchema: { city: z3.string().describe('city'), days: z3.number().int().min(1).optional(), unit: z3.enum(['c', 'f']).default('c'), when: z3.string().datetime().nullable() } }, done);
  server.registerTool('zod4_shape', { description: 'a raw shape', inputSchema: { q: z.string(), limit: z.number().int().max(50).optional() } }, done);
  server.registerTool('no_args', { description: 'none' }, done);
  extra(server);
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'gateway-test', version: '1.0.0' });
  await client.connect(clientSide);
  return { client, tools: (await client.listTools()).tools };
}

/** The MCP Client as the Anthropic SDK's MCPClientLike (callTool's type also allows the protocol's legacy `toolResult` answer, which the helper's type leaves out). */
const asMcpClientLike = (client: Client) => client as unknown as Parameters<typeof mcpTools>[1];

/**
 * MCP tools (@modelcontextprotocol/sdk 1.32: McpServer.registerTool with zod schemas, listed by a
 * Client) as MCP clients pass them on: their `inputSchema` (zod's draft-07 input schema: optional
 * fields outside `required`, no `additionalProperties`, `oneOf` for a discriminated union, `allOf`
 * for an intersection) as chat function tools' and Responses function tools' `parameters` (not
 * strict) and as Messages tools' `input_schema`, raw and through the Anthropic SDK's mcpTools helper
 * (which sends `required: null` when absent) and tool runner: all served (shared/json-schema/tool-schemas.ts,
 * api/routes/messages/input-schemas.ts), sent as listed.
 *
 * A zod tuple is the exception on Messages: draft-07's tuple form (`items` a list, `additionalItems`)
 * is not draft 2020-12, and Anthropic refuses such a tool in these words (hyperdxio/hyperdx pull
 * request 2925 quotes "tools.14.custom.input_schema: JSON schema is invalid. It must match JSON Schema
 * draft 2020-12" for an MCP server's z.tuple; modelcontextprotocol/typescript-sdk issue 745), so the
 * gateway refuses it too; chat takes it (draft-07 is a schema the check takes).
 */
describe('MCP SDK tools: their inputSchema served as chat, Responses and Messages tools', function () {
  this.timeout(120_000);
  const s = openaiOrg();

  it('every listed tool is served as a chat and a Responses function tool, sent as listed', async () => {
    const { client, tools } = await listedTools();
    const chatTools = tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.inputSchema } }));
    for (const model of ['sim-chat', 'sim-claude']) {
      const answer = await s.c.chat.completions.create({ model, messages, tools: chatTools });
      expect(answer.choices, model).to.have.length(1);
    }
    expect((env().sim.log.entries[0].body as { tools: unknown }).tools, 'sent as listed').to.deep.equal(chatTools);
    const responsesTools = tools.map((t) => ({ type: 'function' as const, name: t.name, description: t.description, parameters: t.inputSchema, strict: false }));
    const r = await s.c.responses.create({ model: 'sim-chat', input: 'hello', tools: responsesTools });
    expect(r.status).to.equal('completed');
    await client.close();
  });

  it("every listed tool is served as a Messages tool, raw and through the Anthropic SDK's mcpTools and tool runner", async () => {
    const { client, tools } = await listedTools();
    const anthropic = new Anthropic({ apiKey: s.o.key, baseURL: env().gw.url, maxRetries: 0 });
    const raw = tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));
    for (const model of ['sim-claude', 'sim-chat']) {
      const answer = await anthropic.messages.create({ model, max_tokens: 64, messages, tools: raw as Anthropic.Tool[] });
      expect(answer.type, model).to.equal('message');
      const final = await anthropic.beta.messages.toolRunner({ model, max_tokens: 64, messages, tools: mcpTools(tools, asMcpClientLike(client)) });
      expect(final.type, `${model} runner`).to.equal('message');
    }
    expect((env().sim.log.entries[0].body as { tools: unknown }).tools, 'sent as listed').to.deep.equal(raw);
    await client.close();
  });

  it("a zod tuple (draft-07's tuple form) is Anthropic's 400 on Messages, nothing sent; a chat tool takes it", async () => {
    const { client, tools } = await listedTools((server) =>
      server.registerTool('pair', { description: 'a pair', inputSchema: { range: z.tuple([z.number(), z.number()]) } }, async () => ({ content: [] })),
    );
    const pair = tools.find((t) => t.name === 'pair')!;
    expect(pair.inputSchema.properties, 'the SDK writes the draft-07 tuple').to.deep.equal({ range: { type: 'array', items: [{ type: 'number' }, { type: 'number' }], additionalItems: false, minItems: 2, maxItems: 2 } });
    const at = tools.indexOf(pair);
    const headers = { ...keyHeader(s.o.key), 'anthropic-version': '2023-06-01' };
    const refused = await call('POST', '/v1/messages', { headers, json: { model: 'sim-claude', max_tokens: 64, messages, tools: tools.map((t) => ({ name: t.name, input_schema: t.inputSchema })) } });
    expect(refused.status, refused.text).to.equal(400);
    expect(refused.body).to.deep.equal({ error: { type: 'invalid_request_error', message: `tools.${at}.custom.input_schema: ${INVALID}`, code: 'invalid_request' } });
    expect(env().sim.log.entries, 'nothing sent').to.have.length(0);
    const answer = await s.c.chat.completions.create({ model: 'sim-chat', messages, tools: [{ type: 'function', function: { name: pair.name, parameters: pair.inputSchema } }] });
    expect(answer.choices).to.have.length(1);
    await client.close();
  });
});
