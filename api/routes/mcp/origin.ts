import type { Request, Response, NextFunction } from 'express';
import { config } from '../../../shared/config/env';
import { jsonRpcError } from './json-rpc';

/** JSON-RPC's implementation-defined server error, the SDK transport's code for its own 403 on an Origin. */
const SERVER_ERROR = -32000;

/** The origin of a URL (`https://gw.example.com`), or undefined when it is none (`null`, not a URL). */
function originOf(value: string): string | undefined {
  try {
    const o = new URL(value).origin;
    return o === 'null' ? undefined : o;
  } catch {
    return undefined;
  }
}

/** Whether a request's `Origin` may call `/mcp`: the gateway's own (PUBLIC_BASE_URL) or one of MCP_ALLOWED_ORIGINS (`*`: any). */
export function mcpOriginAllowed(origin: string): boolean {
  const cfg = config();
  if (cfg.mcpAllowedOrigins.includes('*')) return true;
  const o = originOf(origin);
  if (!o) return false;
  return o === originOf(cfg.publicBaseUrl) || cfg.mcpAllowedOrigins.some((a) => originOf(a) === o);
}

/**
 * The MCP Streamable HTTP transport (2025-06-18, 2025-11-25, *Security Warning*): "Servers MUST
 * validate the Origin header on all incoming connections to prevent DNS rebinding attacks. If the
 * Origin header is present and invalid, servers MUST respond with HTTP 403 Forbidden" (the body may
 * be a JSON-RPC error without an id). A request without `Origin` (every non-browser client) passes.
 * The `Host` header proves nothing here: a rebinding page sends its own name in both.
 */
export function mcpOriginCheck(req: Request, res: Response, next: NextFunction): void {
  const origin = req.get('origin');
  if (origin === undefined || mcpOriginAllowed(origin)) return next();
  const shown = origin.length > 64 ? `${origin.slice(0, 64)}…` : origin;
  jsonRpcError(res, 403, SERVER_ERROR, `Forbidden: Origin ${shown} may not call this MCP server (DNS rebinding protection); allowed are the gateway's own origin and MCP_ALLOWED_ORIGINS.`);
}
