import { Router, type Request, type Response, type NextFunction } from 'express';

/** Azure's per-prompt content-filter annotation, as its chat answers carry it (nothing filtered). */
const SAFE = { hate: { filtered: false, severity: 'safe' }, self_harm: { filtered: false, severity: 'safe' }, sexual: { filtered: false, severity: 'safe' }, violence: { filtered: false, severity: 'safe' } };
const PROMPT_FILTER = [{ prompt_index: 0, content_filter_results: SAFE }];

const OPERATIONS = '(/chat/completions|/completions|/embeddings|/images/generations|/images/edits|/audio/transcriptions)';
const DEPLOYMENT = new RegExp(`^/openai/deployments/([^/]+)${OPERATIONS}$`);
const V1 = new RegExp(`^/openai/v1${OPERATIONS}$`);

function azureError(res: Response, status: number, code: string, message: string): void {
  res.status(status).json({ error: { code, message } });
}

/** Chat answers get Azure's content-filter annotations: `prompt_filter_results`, and per choice `content_filter_results`. */
function annotateChat(res: Response): void {
  const json = res.json.bind(res);
  res.json = (body: unknown) => {
    const b = body as { choices?: Array<Record<string, unknown>> } & Record<string, unknown>;
    if (res.statusCode === 200 && Array.isArray(b?.choices)) {
      b.prompt_filter_results = PROMPT_FILTER;
      for (const c of b.choices) c.content_filter_results = SAFE;
    }
    return json(body);
  };
  // Streams open with Azure's filter-only chunk: no choices, empty id and model.
  const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
  let first = true;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (first && typeof chunk === 'string' && chunk.startsWith('data: ')) {
      first = false;
      write(`data: ${JSON.stringify({ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: PROMPT_FILTER })}\n\n`);
    }
    return write(chunk, ...rest);
  }) as Response['write'];
}

/**
 * A chat field a dated API version before 2024-09-01 does not know and refuses with 400 "Unrecognized
 * request argument supplied: <field>": `max_completion_tokens` (openai/openai-python#1724) and
 * `stream_options` (openai/openai-python#1469; GA 2024-10-21 and 2024-09-01-preview on take both).
 */
function unknownToVersion(version: string, body: unknown): string | undefined {
  const dated = /^\d{4}-\d{2}-\d{2}/.test(version) ? version.slice(0, 10) : undefined;
  if (!dated || dated >= '2024-09-01' || !body || typeof body !== 'object') return undefined;
  return ['max_completion_tokens', 'stream_options'].find((k) => k in body);
}

/**
 * Azure OpenAI in front of the OpenAI routes (docs/providers/azure.md): the deployment form
 * `/openai/deployments/{deployment}/{operation}?api-version=...` (the deployment is the model) and
 * the v1 form `/openai/v1/{operation}` (the body names the deployment). The key is the `api-key`
 * header. Requests are rewritten onto `/v1/{operation}`, so every knob applies; the request log
 * keeps the Azure path and query.
 */
export function azureRoutes(): Router {
  const r = Router();
  r.use((req: Request, res: Response, next: NextFunction) => {
    if (!req.path.startsWith('/openai/')) return next();
    const dep = DEPLOYMENT.exec(req.path);
    const v1 = dep ? undefined : V1.exec(req.path);
    if (!dep && !v1) return azureError(res, 404, '404', 'Resource not found');
    if (dep && !req.query['api-version']) return azureError(res, 404, '404', 'Resource not found');
    if (!req.headers['api-key'] && !req.headers.authorization) {
      return azureError(res, 401, '401', 'Access denied due to invalid subscription key or wrong API endpoint.');
    }
    const operation = (dep ?? v1)![dep ? 2 : 1];
    const unknown = dep && req.is('application/json') ? unknownToVersion(String(req.query['api-version']), req.body) : undefined;
    if (unknown) return res.status(400).json({ error: { message: `Unrecognized request argument supplied: ${unknown}`, type: 'invalid_request_error', param: null, code: null } });
    if (dep && req.is('application/json') && req.body && typeof req.body === 'object') (req.body as Record<string, unknown>).model = decodeURIComponent(dep[1]);
    if (operation === '/chat/completions') annotateChat(res);
    const q = req.url.indexOf('?');
    req.url = `/v1${operation}${q >= 0 ? req.url.slice(q) : ''}`; // the query stays: the request log shows api-version
    next();
  });
  return r;
}
