import type { Request, Response } from 'express';

export interface LoggedRequest {
  path: string;
  model: string | undefined;
  authorization: string | undefined;
  xApiKey: string | undefined;
  anthropicBeta: string | undefined;
  /** The Gemini API's key header. */
  googApiKey: string | undefined;
  /** Azure OpenAI's auth header. */
  apiKeyHeader: string | undefined;
  /** Brave's auth header. */
  subscriptionToken: string | undefined;
  /** Query-string parameters (GET upstreams such as Brave). */
  query: Record<string, unknown>;
  body: unknown;
  aborted: boolean;
  at: number;
}

/** Records what reached the simulator, so tests can check what the gateway sent upstream. */
export class RequestLog {
  readonly entries: LoggedRequest[] = [];

  record(req: Request, res: Response): LoggedRequest {
    const e: LoggedRequest = {
      path: req.originalUrl.split('?')[0], // the path as sent, before a route rewrote it (Azure)
      model: (req.body as { model?: string } | undefined)?.model,
      authorization: req.headers.authorization,
      xApiKey: req.headers['x-api-key'] as string | undefined,
      anthropicBeta: req.headers['anthropic-beta'] as string | undefined,
      googApiKey: req.headers['x-goog-api-key'] as string | undefined,
      apiKeyHeader: req.headers['api-key'] as string | undefined,
      subscriptionToken: req.headers['x-subscription-token'] as string | undefined,
      query: { ...(req.query as Record<string, unknown>) },
      body: req.body,
      aborted: false,
      at: Date.now(),
    };
    res.on('close', () => {
      if (!res.writableFinished) e.aborted = true;
    });
    this.entries.push(e);
    if (this.entries.length > 5000) this.entries.splice(0, this.entries.length - 5000);
    return e;
  }
}
