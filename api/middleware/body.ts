import express from 'express';

/** JSON body parser with a route's own size cap, enforced while reading. */
export function jsonBody(limit: string | number = '20mb') {
  return express.json({ limit, type: ['application/json', 'application/*+json'] });
}
