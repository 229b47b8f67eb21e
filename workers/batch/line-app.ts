import crypto from 'crypto';
import express, { type Express, type Request, type Response, type NextFunction } from 'express';
import type { AppContext } from '../../api/context';
import type { AuthInfo, BatchLine } from '../../api/types';
import { chatRouter } from '../../api/routes/chat/router';
import { embeddingsRouter } from '../../api/routes/embeddings/router';
import { messagesRouter } from '../../api/routes/messages/router';
import { responsesRouter } from '../../api/routes/responses/router';
import { jsonBody } from '../../api/middleware/body';
import { errorHandler } from '../../api/middleware/error-handler';
import { requestLogger } from '../../api/middleware/request-log';
import { InFlightMap } from '../../shared/in-flight-map';
import { errors } from '../../shared/errors/codes';

/** What one line's request runs as: the batch creator's identity, its request id, its lane and price. */
export interface LineTicket {
  auth: AuthInfo;
  requestId: string;
  line: BatchLine;
}

/**
 * The runner's own copy of the synchronous inference routes, on a loopback port: a line is sent to
 * it as the HTTP request the caller would have made, so it takes the same validation, model
 * resolution, limits, lease, queue and dialect translation, and its answer (or error body) is exactly
 * what the synchronous endpoint gives. Instead of a key, each request carries a one-time ticket
 * that names the identity the batch was created with (checked again by the runner before each line).
 */
export class LineApp {
  /** Lines in flight: an InFlightMap, so a finished line is not kept alive by the map's old tables (shared/in-flight-map.ts). */
  private readonly tickets = new InFlightMap<LineTicket>();
  readonly app: Express;

  constructor(ctx: AppContext) {
    const app = express();
    app.disable('x-powered-by');
    app.set('etag', false);
    app.set('query parser', 'simple');
    app.use((req: Request, res: Response, next: NextFunction) => {
      const ticket = this.tickets.get(String(req.headers['x-batch-ticket'] ?? ''));
      if (!ticket) return next(errors.invalidApiKey('Unknown batch ticket.'));
      req.id = ticket.requestId;
      req.auth = ticket.auth;
      req.batchLine = ticket.line;
      res.setHeader('x-service-request-id', ticket.requestId);
      next();
    });
    app.use(requestLogger(ctx)); // a line refused or failed gets its row (with batch_id) as a synchronous request does
    app.use(chatRouter(ctx), embeddingsRouter(ctx), messagesRouter(ctx), jsonBody('20mb'), responsesRouter(ctx));
    app.use((req: Request, _res: Response, next: NextFunction) => next(errors.notFound(`No route for ${req.method} ${req.path}.`)));
    app.use(errorHandler);
    this.app = app;
  }

  /** A ticket for one request; forget it once the answer is in. */
  issue(t: LineTicket): string {
    const id = crypto.randomBytes(16).toString('hex');
    this.tickets.set(id, t);
    return id;
  }

  forget(id: string): void {
    this.tickets.delete(id);
  }
}
