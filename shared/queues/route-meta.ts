import type { WireError } from '../errors/ApiError';
import { merged } from '../merged';

/**
 * What a model pool's router tells the pod about a chat-style request: which deployment served it,
 * after how many upstream attempts, and which fallback model when one did. It travels ahead of the
 * first streamed chunk (a chunk with ROUTE_CHUNK_PREFIX), inside a JSON result (ROUTE_RESULT_KEY), or
 * in a failure's headers; the pod turns it into response headers (api/dispatch/chat.ts). A job that
 * runs long also reports it on its own (route-report.ts), for the answers the pod gives without the
 * worker: its own 504 at the deadline, 502 worker_lost.
 */
export interface RouteMeta {
  deployment: string;
  attempts: number;
  fallbackModel?: string;
}

/** Starts a chunk that carries a RouteMeta (never a valid first character of a real chunk). */
export const ROUTE_CHUNK_PREFIX = '\u0000route:';
export const ROUTE_RESULT_KEY = '__route';

export function routeHeaders(m: RouteMeta): Record<string, string> {
  return {
    'x-service-deployment': m.deployment,
    'x-service-attempts': String(m.attempts),
    ...(m.fallbackModel ? { 'x-service-fallback-model': m.fallbackModel } : {}),
  };
}

/** A failure with the route's headers added (headers it already has win: the worker's own). */
export function withRoute(w: WireError, route: RouteMeta | undefined): WireError {
  return route ? merged(w, { headers: merged(routeHeaders(route), w.headers ?? {}) }) : w;
}
