import express from 'express';
import type { Request, Response, NextFunction, RequestHandler } from 'express';
import { assertJsonDepth, assertStorableText } from './json-checks';

/**
 * JSON body parser with a route's own size cap, enforced while reading. Not strict: a body that is
 * valid JSON but not an object (`"text"`, `42`, `null`) parses, and the route refuses it with
 * `invalid_request` ("must be a JSON object"); `invalid_json` is only for text that is not JSON.
 * Bodies nested deeper than MAX_JSON_DEPTH, and strings Postgres cannot store (NUL, lone
 * surrogates), are refused with 400 `invalid_request` (json-checks.ts).
 */
export function jsonBody(limit: string | number = '20mb'): RequestHandler {
  const parse = express.json({
    limit,
    strict: false,
    type: ['application/json', 'application/*+json'],
    verify: (_req, _res, raw) => assertJsonDepth(raw),
  });
  return (req: Request, res: Response, next: NextFunction) =>
    parse(req, res, (err?: unknown) => {
      if (err) return next(err);
      try {
        assertStorableText(req.body);
      } catch (e) {
        return next(e);
      }
      next();
    });
}
