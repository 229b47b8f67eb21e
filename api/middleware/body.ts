import express from 'express';

/**
 * JSON body parser with a route's own size cap, enforced while reading. Not strict: a body that is
 * valid JSON but not an object (`"text"`, `42`, `null`) parses, and the route refuses it with
 * `invalid_request` ("must be a JSON object"); `invalid_json` is only for text that is not JSON.
 */
export function jsonBody(limit: string | number = '20mb') {
  return express.json({ limit, strict: false, type: ['application/json', 'application/*+json'] });
}
