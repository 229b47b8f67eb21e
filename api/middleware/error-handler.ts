import crypto from 'crypto';
import type { Request, Response, NextFunction, ErrorRequestHandler } from 'express';
import { ApiError } from '../../shared/errors/ApiError';
import { errors } from '../../shared/errors/codes';
import { logger } from '../../shared/logger';
import { ClientGone } from '../../shared/errors/ClientGone';
import { asUnavailable } from '../../shared/errors/unavailable';
import { errorPage, pageAreaOf, pageChromeOf } from '../web/error-page';
import { errorBody } from './error-body';
import { logState } from './request-log';

/** body-parser and multer errors carry a `type` or `code`; they become clear 4xx answers. */
function fromFrameworkError(err: { type?: string; status?: number; limit?: number; code?: string; name?: string }): ApiError | undefined {
  // The router could not percent-decode a path parameter (e.g. `/v1/images/%E0%A4%A`): a bad request.
  if (err.name === 'URIError' && err.status === 400) return errors.invalidRequest('The request path is not valid percent-encoding.');
  switch (err.type) {
    case 'entity.parse.failed':
      return errors.invalidJson();
    case 'entity.too.large':
      return errors.payloadTooLarge(err.limit ? `${err.limit} bytes` : 'the limit');
    case 'encoding.unsupported':
      return new ApiError(415, 'unsupported_content_encoding', 'Compressed request bodies are not accepted.');
    case 'charset.unsupported':
      return new ApiError(415, 'unsupported_media_type', 'Unsupported charset.');
    case 'request.aborted':
      return new ApiError(400, 'request_aborted', 'The request body was not received completely.');
  }
  // A compressed body that does not decompress (zlib / brotli stream errors, wrapped by body-parser).
  if (err.status === 400 && typeof err.code === 'string' && /^(Z_|ERR__?ERROR|ERR_BROTLI)/.test(err.code)) {
    return new ApiError(400, 'invalid_content_encoding', 'The request body could not be decoded with its Content-Encoding.');
  }
  // Any other client error a framework raised with a status it means to show (http-errors `expose`).
  const e = err as { status?: number; expose?: boolean };
  if (e.expose === true && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    return new ApiError(e.status, 'invalid_request', 'The request could not be read.');
  }
  return undefined;
}

/** Writes the error envelope (or, for a browser on a web interface, the HTML error page). The only place in the codebase that does. */
export function writeError(res: Response, err: ApiError): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  // a browser on a web interface's page gets the same status as an HTML page; everyone else the envelope
  const area = res.req ? pageAreaOf(res.req, res) : undefined;
  if (area) {
    const e = err.toJSON() as { code: string; message: string };
    res.status(err.status).type('html').send(errorPage(area, err.status, e.code, e.message, pageChromeOf(res)));
    return;
  }
  res.status(err.status).json(errorBody(res.req?.originalUrl.split('?')[0] ?? '', err, res.req?.headers));
}

/** The one error handler: typed errors as they are, framework errors mapped, the rest a 500 with an id. */
export const errorHandler: ErrorRequestHandler = (err: unknown, req: Request, res: Response, _next: NextFunction) => {
  const log = logState(res);
  if (err instanceof ClientGone) {
    if (log) log.failure = { status: 499, code: 'client_closed_request' };
    return; // the client left; there is no one to answer
  }
  let apiError: ApiError | undefined;
  if (err instanceof ApiError) apiError = err;
  else if (err && typeof err === 'object') apiError = fromFrameworkError(err as never) ?? asUnavailable(err);
  if (!apiError) {
    const errorId = crypto.randomBytes(6).toString('hex');
    logger.error({ err, errorId, requestId: req.id, path: req.path }, 'unhandled error');
    apiError = errors.internal(errorId);
  }
  if (log) log.failure = { status: apiError.status, code: apiError.code };
  writeError(res, apiError);
};
