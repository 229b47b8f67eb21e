import http from 'http';
import type { Config } from '../config/env';

/**
 * Server-wide HTTP timeouts for every listening process (web, admin): headers must arrive within
 * `httpHeadersTimeoutMs`, a whole request within `httpRequestTimeoutMs` (a backstop behind the
 * routes' own JSON 408 body deadlines, so it is longer than the longest of them), and an idle
 * keep-alive connection is closed after `httpKeepAliveTimeoutMs` (longer than the usual 60 s of a
 * load balancer in front, so the balancer closes first).
 */
export function serverOptions(cfg: Config): http.ServerOptions {
  return {
    headersTimeout: cfg.httpHeadersTimeoutMs,
    requestTimeout: cfg.httpRequestTimeoutMs,
    keepAliveTimeout: cfg.httpKeepAliveTimeoutMs,
  };
}
