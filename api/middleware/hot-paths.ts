import type { RequestHandler } from 'express';

/**
 * The inference paths that carry nearly all traffic, exactly as clients spell them. None of the
 * routers mounted between the shared middleware and the inference router (health, probes, signed
 * images, the browser root, the dashboard, the path-authentication prefixes) serves any of them, so
 * a request for one goes straight to the inference router instead of being matched against each of
 * those layers in turn (docs/benchmark.md, issue 29: the gateway's own work). Any other spelling
 * (another case, a trailing slash) takes the ordinary walk and ends in the same handlers.
 */
const HOT = new Set(['/v1/chat/completions', '/v1/messages', '/v1/responses', '/v1/embeddings', '/v1/completions', '/v1/rerank']);

/**
 * Dispatches a hot path to `inference`; what it does not answer ends in `notFound`, as it would at
 * the end of the ordinary walk (the inference router is the last router there to match these paths).
 */
export function hotPaths(inference: RequestHandler, notFound: RequestHandler): RequestHandler {
  return (req, res, next) => {
    if (!HOT.has(req.path)) return next();
    inference(req, res, (err?: unknown) => (err ? next(err) : notFound(req, res, next)));
  };
}
