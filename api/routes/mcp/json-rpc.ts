import type { Request, RequestHandler, Response, NextFunction } from 'express';
import { jsonBody } from '../../middleware/body';

/**
 * JSON-RPC 2.0's error codes the route answers before the SDK sees a message (the SDK's ErrorCode
 * values; not imported from it, so this module does not load the SDK, router.ts loads it lazily).
 */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

/**
 * A JSON-RPC error that answers no request (`id: null`, or the id of a message that is no valid one), as the SDK's Streamable HTTP transport
 * writes its own refusals of a POST: an HTTP error status and the JSON-RPC error as the body.
 */
export function jsonRpcError(res: Response, status: number, code: number, message: string, id: string | number | null = null): void {
  res.status(status).json({ jsonrpc: '2.0', id, error: { code, message } });
}

/**
 * The gateway's JSON body parser for `/mcp`, whose text that is not JSON is JSON-RPC's Parse error
 * (-32700, HTTP 400, the SDK transport's own answer: "Parse error: Invalid JSON"), not the REST
 * routes' `invalid_json` envelope, which an MCP client cannot read as a JSON-RPC answer. Every other
 * failure (too large, bad charset or encoding) goes to the error handler as on every route.
 */
export function mcpJsonBody(limit: string): RequestHandler {
  const parse = jsonBody(limit);
  return (req: Request, res: Response, next: NextFunction) =>
    parse(req, res, (err?: unknown) => {
      if ((err as { type?: unknown } | undefined)?.type === 'entity.parse.failed') return jsonRpcError(res, 400, PARSE_ERROR, 'Parse error: Invalid JSON');
      next(err as Error | undefined);
    });
}
