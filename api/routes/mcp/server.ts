import type { IncomingMessage } from 'http';
import type { Request, Response } from 'express';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AppContext } from '../../context';
import { searchCaller } from '../../dispatch/search';
import { mcpToolAllowed } from '../../../shared/policies/mcp-tools';
import { searchErrors } from '../../../shared/search/errors';
import { errors } from '../../../shared/errors/codes';
import { logger } from '../../../shared/logger';
import { WEB_SEARCH_TOOL, callWebSearch } from './web-search-tool';
import { IMAGE_TOOL, IMAGE_TOOL_NAME, callGenerateImage } from './image-tool';
import { toolError, toolResult } from './result';

/**
 * The MCP server behind `/mcp`, built on the official SDK. router.ts loads this module with the first
 * MCP call, so a web pod that never serves one does not hold the SDK (with zod and ajv, about 20 MB).
 */

/** One JSON Schema validator for every per-request server (the SDK builds a new Ajv per server otherwise). */
const validator = new AjvJsonSchemaValidator();

/** Tool calls of one HTTP request get distinct job ids (a JSON-RPC batch may hold several). */
function callId(req: Request, rpcId: string | number): string {
  return `${req.id}-${String(rpcId).replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64)}`;
}

/**
 * One MCP server per HTTP request (stateless Streamable HTTP: no session, so any web pod serves any
 * call), bound to the request's authenticated key. Every tool stays listed whatever the policies or
 * switches say; a call that may not run answers an MCP tool error with the gateway's code.
 */
function mcpServer(ctx: AppContext, req: Request, res: Response): Server {
  const server = new Server({ name: 'inference-gateway', version: '1' }, { capabilities: { tools: {} }, jsonSchemaValidator: validator });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [WEB_SEARCH_TOOL, IMAGE_TOOL] }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name } = request.params;
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    try {
      if (name !== WEB_SEARCH_TOOL.name && name !== IMAGE_TOOL_NAME) throw errors.invalidRequest(`Unknown tool '${name}'.`);
      await ctx.directory.sync();
      const auth = req.auth!;
      if (!(await mcpToolAllowed(ctx.directory, auth.org, auth.userId, name))) throw searchErrors.toolDisabled(name);
      if (name === WEB_SEARCH_TOOL.name) {
        const caller = { ...searchCaller(ctx, req), requestId: callId(req, extra.requestId) };
        return toolResult(await callWebSearch(caller, args, extra.signal));
      }
      return toolResult(await callGenerateImage(ctx, req, res, args, callId(req, extra.requestId)));
    } catch (err) {
      return toolError(err);
    }
  });
  return server;
}

/** Serves one POST /mcp (stateless Streamable HTTP, JSON responses). */
export async function handleMcp(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const server = mcpServer(ctx, req, res);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    void transport.close().catch(() => undefined);
    void server.close().catch(() => undefined);
  });
  transport.onerror = (err) => logger.warn({ err: err.message }, 'MCP transport error');
  await server.connect(transport);
  // the SDK reads `req.auth` as its own AuthInfo type; ours is the gateway's (tools read it from `req`)
  await transport.handleRequest(req as unknown as IncomingMessage, res, req.body);
}
