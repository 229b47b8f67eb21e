import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { env, resetSim } from '../../helpers/harness';
import { withSettings } from '../../helpers/settings';
import { searchOrg, ledger, mcpPost } from './helpers';

/**
 * The hosted MCP server against the MCP specification (2025-11-25, 2025-06-18: lifecycle, Streamable
 * HTTP transport, tools) and JSON-RPC 2.0, message by message, and the official SDK client against it.
 */

type RpcReply = { jsonrpc: string; id: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } };

const initialize = (protocolVersion: string) => ({
  jsonrpc: '2.0',
  id: 'init',
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'probe', version: '0' } },
});

describe('hosted MCP server: conformance with the MCP specification and JSON-RPC 2.0', () => {
  beforeEach(resetSim);

  it('JSON that is no JSON-RPC message is -32600 Invalid Request (HTTP 400; the id when it has a valid one), not -32700 Parse error; nothing runs', async () => {
    const o = await searchOrg();
    const cases: Array<[unknown, unknown]> = [
      [{ foo: 1 }, null],
      [{ jsonrpc: '1.0', id: 1, method: 'tools/list' }, 1],
      [{ jsonrpc: '2.0', id: 'a', method: 7 }, 'a'],
      [{ jsonrpc: '2.0', id: null, method: 'tools/call', params: { name: 'web_search', arguments: { query: 'q' } } }, null],
      [{ jsonrpc: '2.0', id: 1.5, method: 'tools/list' }, null],
      [42, null],
    ];
    for (const [body, id] of cases) {
      const r = await mcpPost(o.key, body);
      const what = JSON.stringify(body);
      expect(r.status, what).to.equal(400);
      const reply = (await r.json()) as RpcReply;
      expect([reply.jsonrpc, reply.id, reply.error?.code], what).to.deep.equal(['2.0', id, -32600]);
      expect(reply.error!.message, what).to.match(/^Invalid Request: /);
    }
    // a request with params by position is a valid JSON-RPC Request, but MCP's params are named: -32602 under its id (HTTP 200)
    const positional = await mcpPost(o.key, { jsonrpc: '2.0', id: 'p', method: 'tools/call', params: ['web_search', { query: 'q' }] });
    expect(positional.status).to.equal(200);
    const p = (await positional.json()) as RpcReply;
    expect([p.jsonrpc, p.id, p.error?.code]).to.deep.equal(['2.0', 'p', -32602]);
    expect(p.error!.message).to.match(/^Invalid params: /);
    // the transport's own checks still come first: a body that is not application/json is 415, an Accept without text/event-stream 406
    const post = (headers: Record<string, string>) =>
      fetch(`${env().gw.url}/mcp`, { method: 'POST', headers: { Authorization: `Bearer ${o.key}`, 'mcp-protocol-version': '2025-03-26', ...headers }, body: '{"foo":1}' });
    expect((await post({ 'content-type': 'text/plain', accept: 'application/json, text/event-stream' })).status).to.equal(415);
    expect((await post({ 'content-type': 'application/json', accept: 'application/json' })).status).to.equal(406);
    expect(env().sim.log.entries, 'no search ran').to.have.length(0);
    expect(await ledger(o.org.id)).to.have.length(0);
  });

  it('a notifications/cancelled in a POST refused as no JSON-RPC (-32600) cancels nothing: the call under that id, coming after, runs', async () => {
    const o = await searchOrg();
    // a cancel that comes before its call is kept for it (docs/search.md, Cancellation): here it must not be
    const r0 = await mcpPost(o.key, { method: 'notifications/cancelled', params: { requestId: 'c1' } });
    expect(r0.status).to.equal(400);
    expect(((await r0.json()) as RpcReply).error?.code).to.equal(-32600);
    const r = await mcpPost(o.key, { jsonrpc: '2.0', id: 'c1', method: 'tools/call', params: { name: 'web_search', arguments: { query: 'after' } } });
    const reply = (await r.json()) as RpcReply;
    expect(reply.result!.isError ?? false, JSON.stringify(reply)).to.equal(false);
    expect(await ledger(o.org.id)).to.have.length(1);
  });

  it('a batch with elements that are no JSON-RPC message answers each element (JSON-RPC 2.0, Batch): an error for the bad ones, in place, and the rest run', async () => {
    const o = await searchOrg();
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'web_search', arguments: { query: 'q' } } },
      1,
      { jsonrpc: '2.0', id: 'x', method: 7 },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { jsonrpc: '2.0', id: 'p', method: 'tools/call', params: ['web_search', { query: 'q' }] },
      { foo: 'boo' },
    ];
    const r = await mcpPost(o.key, batch);
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-type')).to.match(/^application\/json/);
    const replies = (await r.json()) as RpcReply[];
    expect(replies.map((x) => [x.jsonrpc, x.id, x.error?.code ?? 'result']), JSON.stringify(replies)).to.deep.equal([
      ['2.0', 1, 'result'],
      ['2.0', null, -32600],
      ['2.0', 'x', -32600],
      ['2.0', 2, 'result'],
      ['2.0', 'p', -32602],
      ['2.0', null, -32600],
    ]);
    expect(replies[1].error!.message).to.match(/^Invalid Request: message 1 of the batch is not a JSON-RPC 2.0 message/);
    expect(replies[0].result!.isError ?? false, JSON.stringify(replies[0])).to.equal(false);
    expect((replies[3].result!.tools as unknown[]).length).to.equal(2);
    expect(await ledger(o.org.id), 'the good call ran, once').to.have.length(1);
    // JSON-RPC 2.0's own example "rpc call Batch (invalid but not empty)": [1,2,3] is three errors; nothing ran (HTTP 400)
    const all = await mcpPost(o.key, [1, 2, 3]);
    expect(all.status).to.equal(400);
    expect(((await all.json()) as RpcReply[]).map((x) => [x.id, x.error?.code])).to.deep.equal([
      [null, -32600],
      [null, -32600],
      [null, -32600],
    ]);
    // a batch of notifications and a bad element: the bad one is answered, the notifications are taken
    const notes = await mcpPost(o.key, [{ jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', method: 3 }]);
    expect(notes.status).to.equal(200);
    expect(((await notes.json()) as RpcReply[]).map((x) => [x.id, x.error?.code])).to.deep.equal([[null, -32600]]);
  });

  it('a notification with params by position in a batch is never answered (JSON-RPC 2.0: no reply to a notification, in a batch too); a batch left with nothing to answer is 202 with no body', async () => {
    const o = await searchOrg();
    const note = (method: string) => ({ jsonrpc: '2.0', method, params: ['by', 'position'] });
    // beside requests: their answers only, in order; the malformed requests keep their errors under their ids
    const r = await mcpPost(o.key, [
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      note('notifications/progress'),
      { jsonrpc: '2.0', id: 'p', method: 'tools/call', params: ['web_search', { query: 'q' }] },
      note('notifications/cancelled'),
      { jsonrpc: '2.0', id: 'x', method: 7 },
    ]);
    expect(r.status).to.equal(200);
    const replies = (await r.json()) as RpcReply[];
    expect(replies.map((x) => [x.jsonrpc, x.id, x.error?.code ?? 'result']), JSON.stringify(replies)).to.deep.equal([
      ['2.0', 1, 'result'],
      ['2.0', 'p', -32602],
      ['2.0', 'x', -32600],
    ]);
    // notifications only (the transport spec: "MUST return HTTP status code 202 Accepted with no body"), with a valid one or alone
    for (const batch of [[note('notifications/initialized'), { jsonrpc: '2.0', method: 'notifications/initialized' }], [note('notifications/initialized')], [note('a'), note('b')]]) {
      const only = await mcpPost(o.key, batch);
      expect(only.status, JSON.stringify(batch)).to.equal(202);
      expect(await only.text(), JSON.stringify(batch)).to.equal('');
    }
    // beside an element that is no message: that one alone is answered, in the batch's own order; nothing
    // ran (the one taken out did not either), so 400 as a batch of refused elements only
    const mixed = await mcpPost(o.key, [note('notifications/initialized'), 7]);
    expect(mixed.status).to.equal(400);
    expect(((await mixed.json()) as RpcReply[]).map((x) => [x.id, x.error?.code])).to.deep.equal([[null, -32600]]);
    // a notification that is no valid Request object (a `method` not a string) is still JSON-RPC's Invalid Request, id null
    const bad = await mcpPost(o.key, [{ jsonrpc: '2.0', method: 3, params: [1] }]);
    expect(bad.status).to.equal(400);
    expect(((await bad.json()) as RpcReply[]).map((x) => [x.id, x.error?.code])).to.deep.equal([[null, -32600]]);
    expect(env().sim.log.entries, 'no search ran').to.have.length(0);
    expect(await ledger(o.org.id)).to.have.length(0);
  });

  it("a batch's notifications/cancelled beside an element that is no message is taken: the call under that id, coming after, is cancelled", async () => {
    const o = await searchOrg();
    const r = await mcpPost(o.key, [{ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c2' } }, 5]);
    expect(r.status).to.equal(200);
    expect(((await r.json()) as RpcReply[]).map((x) => [x.id, x.error?.code])).to.deep.equal([[null, -32600]]);
    const call = await mcpPost(o.key, { jsonrpc: '2.0', id: 'c2', method: 'tools/call', params: { name: 'web_search', arguments: { query: 'cancelled early' } } });
    const reply = (await call.json()) as RpcReply;
    expect(reply.result!.isError, JSON.stringify(reply)).to.equal(true);
    const text = (reply.result!.content as Array<{ text: string }>)[0].text;
    expect((JSON.parse(text) as { error: { code: string } }).error.code).to.equal('client_closed_request');
    expect(await ledger(o.org.id)).to.have.length(0);
  });

  it('an Origin other than the gateway\'s own (or MCP_ALLOWED_ORIGINS) is 403 with a JSON-RPC error and nothing runs (DNS rebinding protection); no Origin passes', async () => {
    const o = await searchOrg();
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'web_search', arguments: { query: 'q' } } };
    const post = (origin?: string, method = 'POST') =>
      fetch(`${env().gw.url}/mcp`, {
        method,
        headers: {
          Authorization: `Bearer ${o.key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
          ...(origin === undefined ? {} : { origin }),
        },
        ...(method === 'POST' ? { body: JSON.stringify(call) } : {}),
      });
    for (const origin of ['https://evil.example', 'null', `http://rebound.example:${new URL(env().gw.url).port}`]) {
      const r = await post(origin);
      expect(r.status, origin).to.equal(403);
      const reply = (await r.json()) as RpcReply;
      expect([reply.jsonrpc, reply.id, reply.error?.code], origin).to.deep.equal(['2.0', null, -32000]);
      expect((await post(origin, 'GET')).status, `GET ${origin}`).to.equal(403);
    }
    expect(env().sim.log.entries, 'no search ran').to.have.length(0);
    expect(await ledger(o.org.id)).to.have.length(0);
    expect((await post()).status, 'no Origin (a non-browser client)').to.equal(200);
    expect((await post(new URL(env().gw.url).origin)).status, "the gateway's own origin (PUBLIC_BASE_URL)").to.equal(200);
    await withSettings({ MCP_ALLOWED_ORIGINS: 'https://app.example.com, https://other.example' }, async () => {
      expect((await post('https://app.example.com')).status).to.equal(200);
      expect((await post('https://evil.example')).status).to.equal(403);
    });
    await withSettings({ MCP_ALLOWED_ORIGINS: '*' }, async () => {
      expect((await post('https://evil.example')).status).to.equal(200);
    });
    expect(await ledger(o.org.id)).to.have.length(4);
  });

  it('generate_image declares destructiveHint: false (additive; the schema default is true) and web_search is read-only and open-world; both have a title, inputSchema and outputSchema', async () => {
    const o = await searchOrg();
    const r = await mcpPost(o.key, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, undefined, undefined, LATEST_PROTOCOL_VERSION);
    expect(r.status).to.equal(200);
    const tools = ((await r.json()) as RpcReply).result!.tools as Array<{ name: string; title?: string; inputSchema: { type: string }; outputSchema?: { type: string }; annotations?: Record<string, boolean> }>;
    const byName = new Map(tools.map((t) => [t.name, t]));
    const image = byName.get('generate_image')!;
    expect(image.annotations).to.deep.include({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    expect(byName.get('web_search')!.annotations).to.deep.include({ readOnlyHint: true, openWorldHint: true });
    for (const t of tools) {
      expect(t.title, t.name).to.be.a('string');
      expect([t.inputSchema.type, t.outputSchema?.type], t.name).to.deep.equal(['object', 'object']);
    }
  });

  it('version negotiation: a supported version is echoed, an older unknown or a future one gets the latest; an unsupported MCP-Protocol-Version header is 400', async () => {
    const o = await searchOrg();
    for (const [asked, answered] of [
      ['2025-06-18', '2025-06-18'],
      ['2025-03-26', '2025-03-26'],
      ['2024-11-05', '2024-11-05'],
      ['2023-01-01', LATEST_PROTOCOL_VERSION],
      ['2099-12-31', LATEST_PROTOCOL_VERSION],
    ]) {
      // the initialize POST carries no MCP-Protocol-Version (it is not negotiated yet)
      const r = await mcpPost(o.key, initialize(asked), undefined, undefined, null);
      expect(r.status, asked).to.equal(200);
      const reply = (await r.json()) as RpcReply;
      expect(reply.id).to.equal('init');
      expect(reply.result!.protocolVersion, asked).to.equal(answered);
      expect(reply.result!.capabilities).to.have.property('tools');
    }
    // an initialize in a batch negotiates there: a version without batches (2025-06-18 on, or the latest for
    // one the server does not know) refuses the batch 400 -32600; 2025-03-26 has batches
    for (const [asked, status] of [['2025-11-25', 400], ['2025-06-18', 400], ['2023-01-01', 400], ['2025-03-26', 200]] as const) {
      const r = await mcpPost(o.key, [initialize(asked)], undefined, undefined, null);
      expect(r.status, asked).to.equal(status);
      const reply = (await r.json()) as RpcReply | RpcReply[];
      if (status === 400) expect([(reply as RpcReply).id, (reply as RpcReply).error?.code], asked).to.deep.equal([null, -32600]);
      else expect((reply as RpcReply[])[0].result!.protocolVersion).to.equal(asked);
    }
    const bad = await mcpPost(o.key, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, undefined, undefined, '1999-01-01');
    expect(bad.status).to.equal(400);
    expect(((await bad.json()) as RpcReply).error!.message).to.include('protocol version');
  });

  it('a batch (2025-03-26) is answered with an array even when it holds one request (JSON-RPC 2.0), under the caller\'s ids', async () => {
    const o = await searchOrg();
    for (const batch of [
      [{ jsonrpc: '2.0', id: 'only', method: 'tools/list' }],
      [{ jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 7, method: 'ping' }],
    ]) {
      const r = await mcpPost(o.key, batch);
      expect(r.status).to.equal(200);
      const reply = (await r.json()) as RpcReply[];
      expect(reply, JSON.stringify(batch)).to.be.an('array').with.length(1);
      expect(reply[0].id).to.equal(batch[batch.length - 1].id);
      expect(reply[0].result).to.be.an('object');
    }
    // a batch of notifications only is 202 with no body; a single request is answered bare
    const n = await mcpPost(o.key, [{ jsonrpc: '2.0', method: 'notifications/initialized' }]);
    expect([n.status, await n.text()]).to.deep.equal([202, '']);
    const single = (await (await mcpPost(o.key, { jsonrpc: '2.0', id: 1, method: 'ping' })).json()) as RpcReply;
    expect(single.id).to.equal(1);
  });

  it('notifications are 202 with no body; an unknown method is -32601 under its id; Accept without text/event-stream is 406; DELETE and GET are 405 with Allow: POST', async () => {
    const o = await searchOrg();
    const n = await mcpPost(o.key, { jsonrpc: '2.0', method: 'notifications/initialized' }, undefined, undefined, LATEST_PROTOCOL_VERSION);
    expect(n.status).to.equal(202);
    expect(await n.text()).to.equal('');
    const u = await mcpPost(o.key, { jsonrpc: '2.0', id: 9, method: 'resources/list' }, undefined, undefined, LATEST_PROTOCOL_VERSION);
    expect(u.status).to.equal(200);
    const reply = (await u.json()) as RpcReply;
    expect([reply.id, reply.error?.code]).to.deep.equal([9, -32601]);
    const json = await fetch(`${env().gw.url}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${o.key}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(json.status).to.equal(406);
    for (const method of ['GET', 'DELETE']) {
      const r = await fetch(`${env().gw.url}/mcp`, { method, headers: { Authorization: `Bearer ${o.key}`, accept: 'text/event-stream' } });
      expect(r.status, method).to.equal(405);
      expect(r.headers.get('allow'), method).to.equal('POST');
    }
  });

  it('the official SDK client negotiates the latest version, lists the tools and validates a call against the outputSchema', async () => {
    const o = await searchOrg();
    const client = new Client({ name: 'conformance', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${env().gw.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${o.key}` } } });
    await client.connect(transport);
    try {
      expect(transport.protocolVersion).to.equal(LATEST_PROTOCOL_VERSION);
      expect(client.getServerCapabilities()).to.have.property('tools');
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).to.deep.equal(['generate_image', 'web_search']);
      // with the tools listed, the client checks structuredContent against each tool's outputSchema
      const r = (await client.callTool({ name: 'web_search', arguments: { query: 'mcp', count: 1 } })) as CallToolResult;
      expect(r.isError ?? false, JSON.stringify(r)).to.equal(false);
      expect((r.structuredContent as { results: unknown[] }).results).to.have.length(1);
      await client.ping();
    } finally {
      await client.close();
    }
  });
});
