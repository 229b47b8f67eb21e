import type { Request, Response, NextFunction } from 'express';
import { ApiError } from '../../shared/errors/ApiError';
import { errors } from '../../shared/errors/codes';
import { assertJsonDepth, assertStorableText } from '../../shared/http/json-checks';

export interface BoundedJsonOptions {
  /** Raw body cap in bytes; over it answers 413 `payload_too_large` while reading. */
  maxBytes: number;
  /** The whole body must arrive within this many ms, else 408 `body_read_timeout`. */
  timeoutMs: number;
  /** Code for a body that is not a JSON object. */
  invalidCode: string;
}

/** Ends the connection after the answer: the rest of an oversized or stalled body is not read. */
function closing(err: ApiError, res: Response): ApiError {
  res.setHeader('Connection', 'close');
  return err;
}

/**
 * Reads a JSON body itself, before the shared parser: refuses compressed bodies (415), counts bytes
 * while reading (413 as soon as the cap is crossed, or at once from Content-Length), and bounds the
 * time the client may take to send it (408). The parsed object lands in `req.body`.
 */
export function boundedJson(opts: () => BoundedJsonOptions) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const o = opts();
    const encoding = String(req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (encoding !== '' && encoding !== 'identity') {
      return next(new ApiError(415, 'unsupported_content_encoding', 'Compressed request bodies are not accepted; send the JSON uncompressed.'));
    }
    if (!req.is('application/json')) {
      return next(errors.unsupportedMediaType('application/json'));
    }
    const tooLarge = () => errors.payloadTooLarge(`${o.maxBytes} bytes`);
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > o.maxBytes) return next(closing(tooLarge(), res));

    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err?: ApiError) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      if (err) {
        req.pause();
        return next(err);
      }
      const raw = Buffer.concat(chunks, size);
      let parsed: unknown;
      let mayBeUnstorable = true;
      try {
        ({ mayBeUnstorable } = assertJsonDepth(raw, o.invalidCode));
        parsed = JSON.parse(raw.toString('utf8'));
      } catch (e) {
        return next(e instanceof ApiError ? e : new ApiError(400, o.invalidCode, 'The request body is not valid JSON.'));
      }
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
        return next(new ApiError(400, o.invalidCode, 'The request body must be a JSON object.'));
      }
      try {
        // read as UTF-8: without a \u escape or a NUL byte it cannot hold unstorable text (json-checks.ts)
        if (mayBeUnstorable) assertStorableText(parsed, o.invalidCode);
      } catch (e) {
        return next(e);
      }
      req.body = parsed;
      next();
    };
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > o.maxBytes) return finish(closing(tooLarge(), res));
      chunks.push(c);
    };
    const onEnd = () => finish();
    const onError = () => finish(new ApiError(400, 'request_aborted', 'The request body was not received completely.'));
    const onAborted = onError;
    const timer = setTimeout(
      () => finish(closing(new ApiError(408, 'body_read_timeout', `The request body was not received within ${o.timeoutMs} ms.`), res)),
      o.timeoutMs,
    );
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  };
}
