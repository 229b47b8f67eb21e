import bytes from 'bytes';
import express from 'express';
import type { Request, Response, NextFunction, RequestHandler } from 'express';
import { assertJsonDepth, assertParsedDepth, assertStorableText } from '../../shared/http/json-checks';

/**
 * JSON body parser with a route's own size cap, enforced while reading. Not strict: a body that is
 * valid JSON but not an object (`"text"`, `42`, `null`) parses, and the route refuses it with
 * `invalid_request` ("must be a JSON object"); `invalid_json` is only for text that is not JSON.
 *
 * express.json stops keeping bytes at the cap but reads the rest of the body before it answers, so
 * a chunked upload that never ends would never be answered. The guard here counts the bytes too and
 * answers 413 (body-parser's `entity.too.large`, so callers map it as before) as soon as the cap is
 * crossed, closing the connection after the answer; the parser's own later callback is ignored.
 *
 * Bodies nested deeper than MAX_JSON_DEPTH, and strings Postgres cannot store (NUL, lone
 * surrogates), are refused with 400 `invalid_request` (json-checks.ts); the parsed body is walked for
 * the latter only when its raw bytes hold a `\u` escape or are not UTF-8; a body that is not UTF-8 has
 * its depth checked on the parsed body first (assertParsedDepth, a walk of its own), since bytes of
 * UTF-16 or UTF-32 cannot be scanned for brackets and quotes.
 *
 * `watch`: a text (a key such as `file_id`) whose absence from the raw bytes is noted on the request
 * (rawLacksWatched), so that a route need not walk the parsed body for it. Noted only for UTF-8 bytes
 * without a `\u` escape: JSON spells a key's letters, digits and `_` only as themselves or as a `\u`
 * escape, so such bytes without the text cannot parse into it.
 */
/** Set on a request whose raw JSON showed it holds only storable text (assertJsonDepth). */
const STORABLE = Symbol('gw.storableBody');
/** Set on a request whose body was not UTF-8: its depth is checked on the parsed body (assertParsedDepth). */
const OTHER_CHARSET = Symbol('gw.otherCharset');
/** Set on a request whose raw UTF-8 JSON, without a `\u` escape, does not hold jsonBody's `watch` text. */
const LACKS_WATCHED = Symbol('gw.lacksWatched');
type Marked = Request & { [STORABLE]?: true; [OTHER_CHARSET]?: true; [LACKS_WATCHED]?: true };

/** Whether the request's body (read by jsonBody with a `watch` text) cannot hold that text; false when not known. */
export const rawLacksWatched = (req: Request): boolean => (req as Marked)[LACKS_WATCHED] === true;

export function jsonBody(limit: string | number = '20mb', watch?: string): RequestHandler {
  const watched = watch === undefined ? undefined : Buffer.from(watch, 'utf8');
  const parse = express.json({
    limit,
    strict: false,
    type: ['application/json', 'application/*+json'],
    verify: (req, _res, raw, encoding) => {
      // other charsets (UTF-16, UTF-32) cannot be scanned byte by byte: their parsed body is walked instead
      if (!/^utf-?8$/i.test(encoding)) return void ((req as Marked)[OTHER_CHARSET] = true);
      // a UTF-8 body without a \u escape cannot hold NUL or a lone surrogate: no walk of the parsed body
      if (assertJsonDepth(raw).mayBeUnstorable) return;
      (req as Marked)[STORABLE] = true;
      // nor the watched text, if its bytes are not there
      if (watched && raw.indexOf(watched) === -1) (req as Marked)[LACKS_WATCHED] = true;
    },
  });
  const max = typeof limit === 'number' ? limit : bytes.parse(limit)!;
  return (req: Request, res: Response, next: NextFunction): void => {
    let settled = false;
    const once = (err?: unknown) => {
      if (settled) return;
      settled = true;
      req.off('data', count);
      if (!err && !(req as Marked)[STORABLE]) {
        try {
          if ((req as Marked)[OTHER_CHARSET]) assertParsedDepth(req.body);
          assertStorableText(req.body);
        } catch (e) {
          err = e;
        }
      }
      next(err);
    };
    let size = 0;
    const count = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) return;
      res.setHeader('Connection', 'close');
      once(Object.assign(new Error('request entity too large'), { type: 'entity.too.large', status: 413, expose: true, limit: max, length: size }));
    };
    if (req.readable && !req.readableEnded && req.is(['application/json', 'application/*+json'])) req.on('data', count);
    parse(req, res, once);
  };
}
