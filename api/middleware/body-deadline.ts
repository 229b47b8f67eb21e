import type { Request, Response, NextFunction, RequestHandler } from 'express';
import { ApiError } from '../../shared/errors/ApiError';
import { writeError } from './error-handler';

/** Routes that read their body with a deadline of their own (audio uploads, systemone). */
const OWN_DEADLINE = /\/v1\/(audio\/|systemone\/?$)/i;

/** A request that announces a body: a non-zero Content-Length or a chunked Transfer-Encoding. */
function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return Number(length) > 0;
  return req.headers['transfer-encoding'] !== undefined;
}

/**
 * The whole request body must arrive within `timeoutMs()` of the request (408 `body_read_timeout`
 * in the JSON envelope), whichever parser reads it later (JSON, multipart). The connection is closed
 * after the answer, so the rest of a stalled body is never read and nothing is dispatched or billed.
 * Node's own `requestTimeout` (shared/http/server-options.ts) is set longer, as a backstop only.
 */
export function bodyDeadline(timeoutMs: () => number): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!hasBody(req) || OWN_DEADLINE.test(req.path)) return next();
    const ms = timeoutMs();
    const timer = setTimeout(() => {
      if (req.complete || res.headersSent) return; // arrived whole: the app is merely slow to read it
      res.setHeader('Connection', 'close');
      writeError(res, new ApiError(408, 'body_read_timeout', `The request body was not received within ${ms} ms.`));
      res.once('finish', () => req.socket.destroy());
    }, ms);
    timer.unref();
    const clear = () => clearTimeout(timer);
    req.once('end', clear);
    res.once('close', clear);
    next();
  };
}
