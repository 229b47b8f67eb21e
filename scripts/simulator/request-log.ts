import crypto from 'crypto';
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
  /** The file parts of a multipart request (images edits: `image`, `image[]`, `mask`), by field, with their bytes' SHA-256. */
  files?: LoggedFile[];
  aborted: boolean;
  at: number;
}

export interface LoggedFile {
  field: string;
  contentType: string;
  bytes: number;
  sha256: string;
}

/** The multipart file parts multer read into memory (`req.files` of `.any()`), if any. */
function filesOf(req: Request): LoggedFile[] | undefined {
  const files = (req as Request & { files?: unknown }).files;
  if (!Array.isArray(files)) return undefined;
  return (files as Array<{ fieldname: string; mimetype: string; buffer?: Buffer; size: number }>).map((f) => ({
    field: f.fieldname,
    contentType: f.mimetype,
    bytes: f.size,
    sha256: f.buffer ? crypto.createHash('sha256').update(f.buffer).digest('hex') : '',
  }));
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
      files: filesOf(req),
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
