import crypto from 'crypto';
import http from 'http';
import express, { type Express, type Request, type Response, type NextFunction } from 'express';
import type { AppContext } from './context';
import type { AuthInfo, BatchLine, ResumedResponse } from './types';
import { chatRouter } from './routes/chat/router';
import { embeddingsRouter } from './routes/embeddings/router';
import { messagesRouter } from './routes/messages/router';
import { responsesRouter } from './routes/responses/router';
import { jsonBody } from './middleware/body';
import { errorHandler } from './middleware/error-handler';
import { logState, requestLogger } from './middleware/request-log';
import { InFlightMap } from '../shared/in-flight-map';
import { errors, mayRetry } from '../shared/errors/codes';
import { ApiError } from '../shared/errors/ApiError';
import { heldBack } from '../shared/batches/pacing';

/** What one request through a TicketApp runs as: an identity kept by the gateway, its request id, and what it is. */
export interface Ticket {
  auth: AuthInfo;
  requestId: string;
  /** A batch line (workers/batch/runner.ts): its lane and price. */
  line?: BatchLine;
  /** A background response resumed on this pod (api/routes/responses/background-resume.ts). */
  resume?: ResumedResponse;
}

/**
 * A copy of the synchronous inference routes on a loopback port, for requests the gateway makes on a
 * caller's behalf: a batch line (the batch runner), or a background response resumed after its pod was
 * lost. Each is sent as the HTTP request the caller made, so it takes the same validation, model
 * resolution, limits, lease, queue and dialect translation, and its answer (or error body) is exactly
 * what the public endpoint gives. Instead of a key, each request carries a one-time ticket (random, kept
 * in this process's memory only) that names the identity the gateway kept for it, checked again by the
 * caller of `issue` just before.
 */
export class TicketApp {
  /** Requests in flight: an InFlightMap, so a finished one is not kept alive by the map's old tables (shared/in-flight-map.ts). */
  private readonly tickets = new InFlightMap<Ticket>();
  readonly app: Express;
  private server?: http.Server;
  /** `http://127.0.0.1:<port>` once listening (start). */
  base = '';

  constructor(ctx: AppContext) {
    const app = express();
    app.disable('x-powered-by');
    app.set('etag', false);
    app.set('query parser', 'simple');
    app.use((req: Request, res: Response, next: NextFunction) => {
      const ticket = this.tickets.get(String(req.headers['x-gateway-ticket'] ?? ''));
      if (!ticket) return next(errors.invalidApiKey('Unknown ticket.'));
      req.id = ticket.requestId;
      req.auth = ticket.auth;
      req.batchLine = ticket.line;
      req.resumedResponse = ticket.resume;
      res.setHeader('x-service-request-id', ticket.requestId);
      next();
    });
    app.use(requestLogger(ctx)); // a request refused or failed gets its row (a line's with batch_id) as a synchronous one does
    app.use((req: Request, res: Response, next: NextFunction) => {
      // a resumed request is the caller's: its request log row keeps the arrival the row is keyed by
      const state = logState(res);
      if (req.resumedResponse && state) state.receivedAt = req.resumedResponse.receivedAt;
      next();
    });
    app.use(chatRouter(ctx), embeddingsRouter(ctx), messagesRouter(ctx), jsonBody('20mb'), responsesRouter(ctx));
    app.use((req: Request, _res: Response, next: NextFunction) => next(errors.notFound(`No route for ${req.method} ${req.path}.`)));
    app.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
      // a batch line held back (a full lane, its rpm / tpm, the upstream's 429, ...) runs again, as the
      // runner decides with the same heldBack: that try is no outcome and has no Activity row
      const state = logState(res);
      if (req.batchLine && state && err instanceof ApiError && heldBack(err.code, mayRetry(err.headers), !!req.batchLine.crashRetried)) state.held = true;
      next(err);
    });
    app.use(errorHandler);
    this.app = app;
  }

  /** Listens on a free loopback port (`base`). */
  async start(): Promise<void> {
    this.server = http.createServer(this.app);
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  async close(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    s.closeAllConnections(); // called once the requests it served have ended
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  /** A ticket for one request, sent as the `x-gateway-ticket` header; forget it once the answer is in. */
  issue(t: Ticket): string {
    const id = crypto.randomBytes(16).toString('hex');
    this.tickets.set(id, t);
    return id;
  }

  forget(id: string): void {
    this.tickets.delete(id);
  }
}
