import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../../context';
import { only } from '../only';
import { mcpJsonBody } from './json-rpc';
import { mcpOriginCheck } from './origin';

/** The SDK-backed handler, loaded with the first MCP call (server.ts). */
let handler: typeof import('./server') | undefined;

/** `{base_url}/mcp`: POST carries JSON-RPC; GET (server-initiated streams) and DELETE (sessions) answer 405. */
export function mcpRouter(ctx: AppContext): Router {
  const r = Router();
  r.all('/mcp', mcpOriginCheck); // every method, before the body is read (origin.ts)
  only(r, '/mcp', {
    post: [
      mcpJsonBody('1mb'),
      async (req: Request, res: Response) => {
        handler ??= require('./server') as typeof import('./server');
        await handler.handleMcp(ctx, req, res);
      },
    ],
  });
  return r;
}
