import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { env, resetSim, startGateway, type TestGateway } from '../../helpers/harness';
import { setSwitch } from '../../../shared/switches/switches';
import { Image, Model, Organization, UsageEvent, User } from '../../../shared/db/models';
import { upsertModel } from '../../../shared/catalog/catalog-ops';
import { createApiKey, updateKeyControls } from '../../../shared/tenancy/ops';
import { usageSettled } from '../../helpers/usage';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { searchOrg, ledger, mcpPost } from './helpers';

async function connect(key: string, base = env().gw.url, fetchImpl?: typeof fetch): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
  await client.connect(transport);
  return client;
}

function toolErrorCode(r: CallToolResult): string {
  expect(r.isError, JSON.stringify(r)).to.equal(true);
  const body = JSON.parse((r.content[0] as { text: string }).text) as { error: { code: string; message: string } };
  expect(r.structuredContent).to.equal(undefined);
  expect(body.error.message).to.be.a('string').and.not.equal('');
  return body.error.code;
}

describe('hosted MCP server (/mcp, official SDK client over Streamable HTTP)', () => {
  beforeEach(resetSim);

  it('lists web_search and generate_image, calls web_search and gets the result shape as structured content and text', async () => {
    const o = await searchOrg();
    const client = await connect(o.key);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).to.deep.equal(['generate_image', 'web_search']);
      const r = (await client.callTool({ name: 'web_search', arguments: { query: 'model context protocol', count: 2, provider: 'exa' } })) as CallToolResult;
      expect(r.isError ?? false, JSON.stringify(r)).to.equal(false);
      const s = r.structuredContent as { query: string; provider: string; results: Array<Record<string, unknown>> };
      expect(s.query).to.equal('model context protocol');
      expect(s.provider).to.equal('exa');
      expect(s.results).to.have.length(2);
      expect(JSON.parse((r.content[0] as { text: string }).text)).to.deep.equal(s);
      expect(await ledger(o.org.id)).to.have.length(1);
    } finally {
      await client.close();
    }
  });

  it('generate_image runs on the images pool and returns the stored image ids and URLs', async () => {
    const o = await searchOrg();
    const client = await connect(o.key);
    try {
      const r = (await client.callTool({ name: 'generate_image', arguments: { prompt: 'a red square', size: '256x256' } })) as CallToolResult;
      expect(r.isError ?? false, JSON.stringify(r)).to.equal(false);
      const s = r.structuredContent as { model: string; images: Array<{ id: string; url: string }> };
      expect(s.model).to.equal('sim-image');
      expect(s.images).to.have.length(1);
      expect(s.images[0].url.startsWith(`${env().gw.url}/v1/images/${s.images[0].id}/content?expires=`), s.images[0].url).to.equal(true);
      expect((await fetch(s.images[0].url)).status, 'the agent fetches it without a key (signed for an hour)').to.equal(200);
      expect(await Image.count({ where: { id: s.images[0].id, orgId: o.org.id } })).to.equal(1);
      const bad = (await client.callTool({ name: 'generate_image', arguments: { prompt: 'x', model: 'nope' } })) as CallToolResult;
      expect(toolErrorCode(bad)).to.equal('model_not_found');
      await setSwitch(env().redis, 'image_generation', true);
      await env().gw.ctx.switches.refresh();
      try {
        const off = (await client.callTool({ name: 'generate_image', arguments: { prompt: 'x' } })) as CallToolResult;
        expect(toolErrorCode(off)).to.equal('image_generation_disabled');
      } finally {
        await setSwitch(env().redis, 'image_generation', false);
        await env().gw.ctx.switches.refresh();
      }
    } finally {
      await client.close();
    }
  });

  it("generate_image without a model takes the first image model the key may call, not one its allowed list refuses", async () => {
    const o = await searchOrg();
    const id = `zz-image-${Date.now()}`;
    await upsertModel({ id, provider: 'simulator', upstream: 'sim-image-1', capabilities: { image_generation: true }, prices: { image: 1000 } });
    await bumpEpoch(env().redis);
    const limited = await createApiKey(env().redis, { orgId: o.org.id, controls: { allowedModels: [id] } });
    const client = await connect(limited.key);
    try {
      const r = (await client.callTool({ name: 'generate_image', arguments: { prompt: 'a red square' } })) as CallToolResult;
      expect(r.isError ?? false, JSON.stringify(r)).to.equal(false);
      expect((r.structuredContent as { model: string }).model, 'sim-image sorts first, but the key may not call it').to.equal(id);
      const named = (await client.callTool({ name: 'generate_image', arguments: { prompt: 'x', model: 'sim-image' } })) as CallToolResult;
      expect(toolErrorCode(named), 'naming a model off the list is still refused').to.equal('model_not_allowed');
    } finally {
      await client.close();
      await Model.destroy({ where: { publicId: id } });
      await bumpEpoch(env().redis);
    }
  });

  it('two generate_image calls in one batched MCP request run as two jobs: two images, two usage events', async () => {
    const o = await searchOrg();
    const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'generate_image', arguments: { prompt: `batch ${id}`, size: '256x256' } } });
    const r = await fetch(`${env().gw.url}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${o.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-03-26' },
      body: JSON.stringify([call(1), call(2)]),
    });
    expect(r.status).to.equal(200);
    const replies = (await r.json()) as Array<{ id: number; result: CallToolResult }>;
    expect(replies.map((x) => x.id).sort()).to.deep.equal([1, 2]);
    const ids = replies.map((x) => {
      expect(x.result.isError ?? false, JSON.stringify(x)).to.equal(false);
      return (x.result.structuredContent as { images: Array<{ id: string }> }).images[0].id;
    });
    expect(new Set(ids).size).to.equal(2);
    expect(await Image.count({ where: { id: ids, orgId: o.org.id } })).to.equal(2);
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { orgId: o.org.id, modality: 'image' } });
    expect(events).to.have.length(2);
    expect(new Set(events.map((e) => e.requestId)).size).to.equal(2);
  });

  it('errors are MCP tool errors with the spec code: quota_exceeded, provider_not_allowed, invalid_request', async () => {
    const o = await searchOrg({ monthlyAllowance: 1 });
    const client = await connect(o.key);
    try {
      expect(toolErrorCode((await client.callTool({ name: 'web_search', arguments: { query: 'q', provider: 'nope' } })) as CallToolResult)).to.equal('provider_not_allowed');
      // a long provider name is quoted to 64 characters, not echoed whole
      const long = (await client.callTool({ name: 'web_search', arguments: { query: 'q', provider: 'p'.repeat(100_000) } })) as CallToolResult;
      expect(toolErrorCode(long)).to.equal('provider_not_allowed');
      expect((long.content[0] as { text: string }).text.length).to.be.below(600);
      expect(toolErrorCode((await client.callTool({ name: 'web_search', arguments: { query: '' } })) as CallToolResult)).to.equal('invalid_request');
      expect(toolErrorCode((await client.callTool({ name: 'web_search', arguments: { query: 'x'.repeat(401) } })) as CallToolResult)).to.equal('invalid_request');
      expect(((await client.callTool({ name: 'web_search', arguments: { query: 'q' } })) as CallToolResult).isError ?? false).to.equal(false);
      expect(toolErrorCode((await client.callTool({ name: 'web_search', arguments: { query: 'q' } })) as CallToolResult)).to.equal('quota_exceeded');
    } finally {
      await client.close();
    }
  });

  it('malformed tools/call params and unknown tools are JSON-RPC -32602 Invalid params (not -32603) with a plain message; nothing runs', async () => {
    const o = await searchOrg();
    const notObject = '`params.arguments` must be an object holding the tool\'s arguments.';
    const noName = '`params.name` must be a string, the name of the tool to call.';
    const bad: Array<[Record<string, unknown> | undefined, string]> = [
      [{ name: 'web_search', arguments: 'q' }, notObject],
      [{ name: 'web_search', arguments: ['q'] }, notObject],
      [{ name: 'web_search', arguments: null }, notObject],
      [{ arguments: { query: 'q' } }, noName],
      [{ name: 7, arguments: { query: 'q' } }, noName],
      [undefined, 'tools/call needs `params` with the `name` of the tool to call.'],
      [{ name: 'no_such_tool', arguments: {} }, 'Unknown tool: no_such_tool'],
    ];
    for (const [params, message] of bad) {
      const r = await mcpPost(o.key, { jsonrpc: '2.0', id: 9, method: 'tools/call', ...(params ? { params } : {}) });
      expect(r.status).to.equal(200);
      const reply = (await r.json()) as { id: number; result?: unknown; error?: { code: number; message: string } };
      expect(reply.id).to.equal(9);
      expect(reply.error?.code, `${JSON.stringify(params)}: ${JSON.stringify(reply)}`).to.equal(-32602);
      // a message of its own: not the SDK's "MCP error -32602: " prefix, zod's issue dump or a stack
      expect(reply.error?.message, JSON.stringify(params)).to.equal(message);
    }
    // The official client: one McpError, its message prefixed once (by the client) with the code.
    const client = await connect(o.key);
    try {
      const err = await client.callTool({ name: 'web_search', arguments: 'q' as unknown as Record<string, unknown> }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(McpError);
      expect((err as McpError).code).to.equal(-32602);
      expect((err as McpError).message).to.equal(`MCP error -32602: ${notObject}`);
    } finally {
      await client.close();
    }
    expect(env().sim.log.entries, 'no upstream call').to.have.length(0);
    expect(await ledger(o.org.id)).to.have.length(0);
  });

  it('initialize and tools/list with params that fail their schema are -32602 Invalid params with a plain message (not -32603 and zod issues); a batch answers the rest', async () => {
    const o = await searchOrg();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ jsonrpc: '2.0', id: 1, method: 'initialize' }, '`params`'],
      [{ jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {} } }, '`params.clientInfo`'],
      [{ jsonrpc: '2.0', id: 3, method: 'tools/list', params: { cursor: 5 } }, '`params.cursor`'],
    ];
    for (const [message, names] of cases) {
      const r = await mcpPost(o.key, message, undefined, undefined, message.method === 'initialize' ? null : '2025-06-18');
      const reply = (await r.json()) as { id: unknown; error: { code: number; message: string } };
      expect(r.status, JSON.stringify(reply)).to.equal(200);
      expect([reply.id, reply.error.code], JSON.stringify(reply)).to.deep.equal([message.id, -32602]);
      expect(reply.error.message).to.include(names).and.to.match(new RegExp(`^Invalid ${message.method} params: `));
      expect(reply.error.message, 'no zod issue dump').not.to.match(/[[{]\s*"|\n/);
    }
    // in a batch, the others are answered under their ids
    const r = await mcpPost(o.key, [cases[2][0], { jsonrpc: '2.0', id: 9, method: 'tools/list' }, { jsonrpc: '2.0', id: 10, method: 'ping' }]);
    const replies = (await r.json()) as Array<{ id: number; error?: { code: number }; result?: { tools?: unknown[] } }>;
    expect(replies.map((m) => [m.id, m.error?.code ?? 'ok'])).to.deep.equal([[3, -32602], [9, 'ok'], [10, 'ok']]);
    expect(replies[1].result!.tools).to.have.length(2);
  });

  it('an argument value the tool refuses (or an argument outside its inputSchema) is a tool error (isError, invalid_request) the model can read, not a protocol error', async () => {
    const o = await searchOrg();
    const client = await connect(o.key);
    try {
      for (const args of [{}, { query: 5 }, { query: 'q', colour: 'red' }]) {
        const r = (await client.callTool({ name: 'web_search', arguments: args })) as CallToolResult;
        expect(toolErrorCode(r), JSON.stringify(args)).to.equal('invalid_request');
      }
      // generate_image declares additionalProperties: false too: an argument outside its schema (a REST
      // field such as quality or response_format) is refused, not sent upstream or silently ignored
      for (const args of [{ prompt: 'p', size: '256x256', quality: 'high' }, { prompt: 'p', size: '256x256', response_format: 'b64_json' }, { prompt: 'p', steps: 10 }]) {
        const r = (await client.callTool({ name: 'generate_image', arguments: args })) as CallToolResult;
        expect(toolErrorCode(r), JSON.stringify(args)).to.equal('invalid_request');
        expect((r.content[0] as { text: string }).text).to.include('Unknown argument');
      }
      expect(await Image.count({ where: { orgId: o.org.id } })).to.equal(0);
    } finally {
      await client.close();
    }
    expect(env().sim.log.entries, 'no upstream call').to.have.length(0);
    expect(await ledger(o.org.id)).to.have.length(0);
  });

  it('the web_search kill switch: the tool stays listed, calls answer web_search_disabled; /v1/alpha/search answers 503', async () => {
    const o = await searchOrg();
    const client = await connect(o.key);
    await setSwitch(env().redis, 'web_search', true);
    try {
      await env().gw.ctx.switches.refresh();
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).to.include('web_search');
      expect(toolErrorCode((await client.callTool({ name: 'web_search', arguments: { query: 'q' } })) as CallToolResult)).to.equal('web_search_disabled');
      const r = await fetch(`${env().gw.url}/v1/alpha/search`, { method: 'POST', headers: { 'SERVICE-API-KEY': o.key, 'content-type': 'application/json' }, body: '{"query":"q"}' });
      expect(r.status).to.equal(503);
      expect(((await r.json()) as { error: { code: string } }).error.code).to.equal('web_search_disabled');
      expect(env().sim.log.entries).to.have.length(0);
    } finally {
      await setSwitch(env().redis, 'web_search', false);
      await env().gw.ctx.switches.refresh();
      await client.close();
    }
    expect(await ledger(o.org.id)).to.have.length(0);
  });

  it('org-wide and per-user tool policies answer mcp_tool_disabled (the user entry wins)', async () => {
    const o = await searchOrg({ monthlyAllowance: 10 });
    const m = await o.member();
    await Organization.update({ policies: { mcp_tools: { web_search: 'deny', generate_image: 'deny' } } }, { where: { id: o.org.id } });
    await bumpEpoch(env().redis);
    const orgClient = await connect(o.key);
    const memberClient = await connect(m.key);
    try {
      expect(toolErrorCode((await orgClient.callTool({ name: 'web_search', arguments: { query: 'q' } })) as CallToolResult)).to.equal('mcp_tool_disabled');
      expect(toolErrorCode((await orgClient.callTool({ name: 'generate_image', arguments: { prompt: 'q' } })) as CallToolResult)).to.equal('mcp_tool_disabled');
      expect(toolErrorCode((await memberClient.callTool({ name: 'web_search', arguments: { query: 'q' } })) as CallToolResult)).to.equal('mcp_tool_disabled');
      await User.update({ policies: { mcp_tools: { web_search: 'allow' } } }, { where: { id: m.userId } });
      await bumpEpoch(env().redis);
      expect(((await memberClient.callTool({ name: 'web_search', arguments: { query: 'q' } })) as CallToolResult).isError ?? false).to.equal(false);
      expect(toolErrorCode((await orgClient.callTool({ name: 'web_search', arguments: { query: 'q' } })) as CallToolResult)).to.equal('mcp_tool_disabled');
      const r = await fetch(`${env().gw.url}/v1/alpha/search`, { method: 'POST', headers: { 'SERVICE-API-KEY': o.key, 'content-type': 'application/json' }, body: '{"query":"q"}' });
      expect(r.status).to.equal(403);
    } finally {
      await orgClient.close();
      await memberClient.close();
    }
    expect(await ledger(o.org.id)).to.have.length(1);
  });

  it('stateless: a second web process serves the next call of the same client', async () => {
    const o = await searchOrg();
    const second: TestGateway = await startGateway('test-pod-mcp-2');
    const served: string[] = [];
    let n = 0;
    // each HTTP request of the one client goes to the other pod in turn
    const alternate: typeof fetch = (input, init) => {
      const url = new URL(String(input instanceof Request ? input.url : input));
      const base = n++ % 2 === 0 ? env().gw.url : second.url;
      served.push(base);
      return fetch(`${base}${url.pathname}${url.search}`, init);
    };
    const client = await connect(o.key, env().gw.url, alternate);
    try {
      for (let i = 0; i < 3; i++) {
        const r = (await client.callTool({ name: 'web_search', arguments: { query: `q${i}` } })) as CallToolResult;
        expect(r.isError ?? false, JSON.stringify(r)).to.equal(false);
      }
      expect(new Set(served).size).to.equal(2);
    } finally {
      await client.close();
      await second.close();
    }
  });

  it('a JSON-RPC batch under protocol 2025-06-18 or later is 400 -32600 and nothing runs; under 2025-03-26 or no header it is served', async () => {
    const o = await searchOrg();
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'web_search', arguments: { query: 'q' } } },
    ];
    for (const protocol of ['2025-06-18', '2025-11-25']) {
      const r = await mcpPost(o.key, batch, undefined, undefined, protocol);
      expect(r.status, protocol).to.equal(400);
      const reply = (await r.json()) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
      expect([reply.jsonrpc, reply.id, reply.error.code], protocol).to.deep.equal(['2.0', null, -32600]);
      expect(reply.error.message).to.include(protocol);
    }
    expect(env().sim.log.entries, 'no search ran').to.have.length(0);
    expect(await ledger(o.org.id)).to.have.length(0);
    // a single message under 2025-11-25 is served
    expect((await mcpPost(o.key, batch[0], undefined, undefined, '2025-11-25')).status).to.equal(200);
    // without the header the version is 2025-03-26 (the transport spec's default), which has batches
    for (const protocol of ['2025-03-26', null]) {
      const r = await mcpPost(o.key, batch, undefined, undefined, protocol);
      expect(r.status, String(protocol)).to.equal(200);
      expect(((await r.json()) as { id: number }[]).map((m) => m.id)).to.deep.equal([1, 2]);
    }
    expect(await ledger(o.org.id)).to.have.length(2);
  });

  it('text that is not JSON is JSON-RPC -32700 Parse error (HTTP 400, id null), not the REST invalid_json envelope; an empty batch is -32600; nothing runs', async () => {
    const o = await searchOrg();
    const post = (body: string, protocol: string) =>
      fetch(`${env().gw.url}/mcp`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${o.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': protocol },
        body,
      });
    for (const protocol of ['2025-03-26', '2025-11-25']) {
      for (const body of ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"web_search"', 'not json', '[{"jsonrpc":"2.0",']) {
        const r = await post(body, protocol);
        expect(r.status, body).to.equal(400);
        expect(r.headers.get('content-type')).to.match(/^application\/json/);
        const reply = (await r.json()) as Record<string, unknown>;
        // the SDK transport's own answer to a body it cannot parse
        expect(reply, body).to.deep.equal({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: Invalid JSON' } });
      }
    }
    // JSON-RPC 2.0: an empty array is one Invalid Request (it was 202, as if it held notifications)
    const empty = await post('[]', '2025-03-26');
    expect(empty.status).to.equal(400);
    const reply = (await empty.json()) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
    expect([reply.jsonrpc, reply.id, reply.error.code]).to.deep.equal(['2.0', null, -32600]);
    expect(env().sim.log.entries, 'no search ran').to.have.length(0);
    expect(await ledger(o.org.id)).to.have.length(0);
  });

  it('needs an inference key: 401 on the HTTP level with a WWW-Authenticate challenge, invalid_token for a refused key (RFC 6750); GET /mcp is 405', async () => {
    const o = await searchOrg();
    const expired = await createApiKey(env().redis, { orgId: o.org.id });
    await updateKeyControls(env().redis, expired.id, { expiresAt: new Date(Date.now() - 1000) });
    const cases: Array<[string, Record<string, string>, string]> = [
      // RFC 6750 §3.1: "If the request lacks any authentication information ... SHOULD NOT include an error code"
      ['no credential', {}, 'Bearer'],
      // "invalid_token: The access token provided is expired, revoked, malformed, or invalid for other reasons"
      ['unknown key', { Authorization: 'Bearer svc_nope' }, 'Bearer error="invalid_token"'],
      ['expired key', { Authorization: `Bearer ${expired.key}` }, 'Bearer error="invalid_token"'],
      ['a token that is no gateway key', { Authorization: 'Bearer sk-not-ours' }, 'Bearer error="invalid_token"'],
    ];
    for (const [what, auth, challenge] of cases) {
      const r = await fetch(`${env().gw.url}/mcp`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
      expect(r.status, what).to.equal(401);
      // RFC 9110 §15.5.2 and the MCP authorization spec: a 401 MUST carry WWW-Authenticate
      expect(r.headers.get('www-authenticate'), what).to.equal(challenge);
      // as the official SDK's own parser of the challenge reads it
      expect(extractWWWAuthenticateParams(r).error, what).to.equal(challenge === 'Bearer' ? undefined : 'invalid_token');
    }
    // the official client sees the refusal as a 401 (its transport reads the challenge only with an OAuth provider)
    const err = await connect(expired.key).then(
      () => undefined,
      (e: unknown) => e as { code?: number },
    );
    expect(err?.code).to.equal(401);
    const g = await fetch(`${env().gw.url}/mcp`, { headers: { 'SERVICE-API-KEY': o.key, accept: 'text/event-stream' } });
    expect(g.status).to.equal(405);
  });

  it('generate_image under protocol 2025-06-18 or later adds a resource_link per stored image (its URL, name, MIME type) after the JSON text; under 2025-03-26 none', async () => {
    const o = await searchOrg();
    const client = await connect(o.key); // negotiates the latest version and sends it as MCP-Protocol-Version
    try {
      const r = (await client.callTool({ name: 'generate_image', arguments: { prompt: 'two squares', size: '256x256', n: 2 } })) as CallToolResult;
      expect(r.isError ?? false, JSON.stringify(r)).to.equal(false);
      const s = r.structuredContent as { images: Array<{ id: string; url: string }> };
      expect(s.images).to.have.length(2);
      expect(r.content.map((c) => c.type)).to.deep.equal(['text', 'resource_link', 'resource_link']);
      expect(JSON.parse((r.content[0] as { text: string }).text), 'the serialized structured content first').to.deep.equal(s);
      for (const [i, img] of s.images.entries()) {
        const link = r.content[i + 1] as { uri: string; name: string; mimeType?: string; title?: string };
        expect(link.uri).to.equal(img.url);
        expect(link.name).to.equal(`${img.id}.png`);
        expect(link.mimeType).to.equal('image/png');
        expect(link.title).to.equal(`Generated image ${i + 1} of 2`);
        const fetched = await fetch(link.uri);
        expect([fetched.status, fetched.headers.get('content-type')], 'the link opens without a key').to.deep.equal([200, 'image/png']);
      }
    } finally {
      await client.close();
    }
    // a 2025-03-26 client knows no resource_link (its content types are text, image, audio, resource): none is sent
    const old = await mcpPost(o.key, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'generate_image', arguments: { prompt: 'old client', size: '256x256' } } });
    const reply = (await old.json()) as { result: CallToolResult };
    expect(reply.result.content.map((c) => c.type)).to.deep.equal(['text']);
    expect((reply.result.structuredContent as { images: unknown[] }).images).to.have.length(1);
  });
});
