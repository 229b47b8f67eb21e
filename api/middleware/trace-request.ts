import { pathWithoutKey } from './path-auth';
import type { Request, Response, NextFunction } from 'express';
import { span, type Attrs, type SpanHandle } from '../../shared/tracing/trace';
import { A } from '../../shared/tracing/attributes';
import { failureOf } from './request-log';

/**
 * A request's spans on the web pod: the server span (continuing the caller's `traceparent`) and
 * one step at a time under it (authenticate, validate, answer; admit, enqueue and wait are
 * api/dispatch/run-job.ts's). Only exists when tracing is on.
 */
export class RequestTrace {
  private step: SpanHandle | undefined;
  constructor(readonly root: SpanHandle) {}

  /** Ends the current step and starts `name` under the request span. */
  begin(name: string, attributes?: Attrs): void {
    this.step?.end();
    this.step = span(name, this.root, { attributes });
  }

  /** Ends the current step; `errorType` marks it failed. */
  endStep(errorType?: string): void {
    if (errorType) this.step?.fail(errorType);
    this.step?.end();
    this.step = undefined;
  }
}

/** The request path for a span: a path-authentication key (`/a/{api_key}/...`) is never recorded. */
const safePath = (req: Request) => pathWithoutKey(req.originalUrl);

/**
 * Mounted by createApp only when tracing is on. Answers `traceresponse` (W3C Trace Context
 * Level 2) with the request span's context, so a caller without a trace of its own learns the id.
 */
export function traceRequest(req: Request, res: Response, next: NextFunction): void {
  const tp = req.headers.traceparent;
  const ts = req.headers.tracestate;
  const parent = typeof tp === 'string' ? { traceparent: tp, tracestate: typeof ts === 'string' ? ts : undefined } : undefined;
  const root = span(req.method, parent, {
    kind: 'server',
    attributes: { [A.httpMethod]: req.method, [A.urlPath]: safePath(req), [A.requestId]: req.id },
  });
  const trace = new RequestTrace(root);
  req.trace = trace;
  const carrier = root.carrier();
  if (carrier) res.setHeader('traceresponse', carrier.traceparent);
  res.once('close', () => {
    trace.endStep();
    const route = req.route?.path as string | undefined;
    if (route) root.rename(`${req.method} ${route}`);
    // the request log's outcome: a stream cut after its first chunk went out as 200 but failed (502),
    // a client that left mid-stream is 499, as the request's row says
    const failure = failureOf(res);
    const status = failure?.status ?? res.statusCode;
    root.set({ [A.httpRoute]: route, [A.httpStatus]: status, [A.orgId]: req.auth?.orgId });
    if (status >= 500) root.fail(failure?.code ?? String(status));
    root.end();
  });
  next();
}
