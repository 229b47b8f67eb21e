import http from 'http';
import crypto from 'crypto';
import { upsertModel, upsertProvider } from '../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../shared/cache/epoch';
import { env } from './harness';
import { Model, Provider } from '../../shared/db/models';
import { parametersProblem } from '../../shared/json-schema/tool-schemas';

/**
 * One answer of the scripted upstream: a JSON body (any status), or server-sent events (each `data`
 * JSON-encoded unless a string). SSE is framed as the upstream's kind frames it: `data:` lines and a
 * closing `[DONE]` for `openai` (unless `done: false`), `event: <type>` + `data:` and no `[DONE]` for
 * `anthropic`, `data:` lines alone for `gemini` (streamGenerateContent?alt=sse).
 */
export type Reply =
  | { kind: 'json'; body: unknown; status?: number }
  | { kind: 'sse'; events: unknown[]; done?: boolean }
  /** Writes the answer itself (bytes no other kind sends: a body too large, a stream that goes on or breaks off). */
  | { kind: 'raw'; write: (res: http.ServerResponse) => void };

/** A request as the upstream received it. `body` is the JSON body, or a multipart form's parts (a file part as `{name, type, bytes}`). */
export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export type UpstreamKind = 'openai' | 'anthropic' | 'azure' | 'gemini' | 'cohere';

/** Answers each request with its own `json` unless it asked to stream (`stream: true`): then `events`. */
export const byStream =
  (json: unknown, events: unknown[]) =>
  (req: Received): Reply =>
    req.body?.stream ? { kind: 'sse', events } : { kind: 'json', body: json };

/** What `model()` registers; the defaults make a chat model. */
export interface ModelOptions {
  capabilities?: Record<string, boolean>;
  prices?: Record<string, number>;
  config?: Record<string, unknown>;
  /** Provider settings (Azure: `api_version`, default `2024-10-21`). */
  settings?: Record<string, string>;
  /** The model's tokenizer (an encoding or a profile's name; default o200k_base). */
  tokenizer?: string;
  /** The model's task limits (embeddings: `max_batch_size`, `supports_dimensions`, ...). */
  limits?: Record<string, unknown>;
  /** The model's context window in tokens (default none). */
  contextWindow?: number;
  /** The models that serve its requests when it cannot (docs/routing.md). */
  fallbacks?: string[];
}

const DEFAULT_CAPABILITIES = { chat: true, vision: true, tools: true, json_schema: true };

async function readBody(req: http.IncomingMessage, raw: Buffer): Promise<unknown> {
  const type = req.headers['content-type'] ?? '';
  if (type.startsWith('multipart/form-data')) {
    const form = await new Response(raw, { headers: { 'content-type': type } }).formData();
    const out: Record<string, unknown> = {};
    for (const [name, v] of form.entries()) {
      const value = typeof v === 'string' ? v : { name: v.name, type: v.type, bytes: v.size };
      out[name] = name in out ? ([] as unknown[]).concat(out[name], value) : value;
    }
    return out;
  }
  const text = raw.toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

/**
 * A local upstream that answers exactly what the test scripted, for wire shapes the simulator never
 * sends (a tool call finished with `stop`, an in-band `error` chunk, a sparse transcription...). Each
 * request takes the next reply of `next`; when none is queued, `otherwise` answers (by default a 500
 * "nothing scripted"). Every request is kept in `received`. Its models (`model()`) leave the catalog
 * on `close()`.
 */
export class ScriptedUpstream {
  received: Received[] = [];
  next: Reply[] = [];
  otherwise?: (req: Received) => Reply;
  url = '';
  private server!: http.Server;
  private models: string[] = [];

  constructor(readonly kind: UpstreamKind = 'openai') {}

  /** A started upstream of `kind`. */
  static async start(kind: UpstreamKind = 'openai'): Promise<ScriptedUpstream> {
    const up = new ScriptedUpstream(kind);
    await up.start();
    return up;
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void readBody(req, Buffer.concat(chunks)).then(
          (body) => this.answer({ path: req.url ?? '', headers: req.headers, body }, res),
          () => res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"unreadable body"}}'),
        );
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  private answer(r: Received, res: http.ServerResponse): void {
    this.received.push(r);
    const s = this.next.shift() ?? this.otherwise?.(r);
    if (!s) {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'nothing scripted' } }));
    } else if (s.kind === 'raw') {
      s.write(res);
    } else if (s.kind === 'json') {
      res.writeHead(s.status ?? 200, { 'content-type': 'application/json' }).end(JSON.stringify(s.body));
    } else {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const anthropic = this.kind === 'anthropic';
      const events = s.events.map((d) => {
        const data = typeof d === 'string' ? d : JSON.stringify(d);
        return anthropic ? `event: ${(d as { type: string }).type}\ndata: ${data}\n\n` : `data: ${data}\n\n`;
      });
      res.end(events.join('') + ((s.done ?? (!anthropic && this.kind !== 'gemini')) ? 'data: [DONE]\n\n' : ''));
    }
  }

  reset(): void {
    this.received = [];
    this.next = [];
  }

  /** Stops the server and takes its models out of the catalog (a model whose upstream is gone would fail later suites' checks of every listed model). */
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
    for (const name of this.models.splice(0)) await dropScriptedModel(name);
  }

  /** A model of its own (provider and model both named by the returned public id, upstream model `up-model`) on this upstream. */
  async model(opts: ModelOptions = {}): Promise<string> {
    const id = `scripted-${crypto.randomBytes(4).toString('hex')}`;
    const base_url = this.kind === 'openai' ? `${this.url}/v1` : this.url;
    const settings = this.kind === 'azure' ? { api_version: '2024-10-21', ...opts.settings } : opts.settings;
    // it plays a vendor's service, which checks a caller's own key: passthrough allowed
    await upsertProvider({ name: id, kind: this.kind, base_url, api_key: 'sk-scripted', passthrough: true, ...settings } as never);
    this.models.push(id);
    await upsertModel({
      id,
      provider: id,
      upstream: 'up-model',
      capabilities: opts.capabilities ?? DEFAULT_CAPABILITIES,
      prices: opts.prices ?? { input_token: 1, output_token: 1 },
      config: opts.config,
      tokenizer: opts.tokenizer,
      limits: opts.limits,
      context_window: opts.contextWindow,
      fallbacks: opts.fallbacks,
    } as never);
    await bumpEpoch(env().redis);
    return id;
  }
}

const chunkBase = { id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'up-model' };
const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

/** One chat-completion chunk with one choice (`extra` adds to the choice). */
export const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) => ({
  ...chunkBase,
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish, ...extra }],
});

/** The usage-only chunk that closes a stream asked for `include_usage`. */
export const usageChunk = (usage: Record<string, unknown> = USAGE) => ({ ...chunkBase, choices: [], usage });

/** A chat completion of one choice (`choiceExtra` adds to the choice). */
export const completion = (message: Record<string, unknown>, finish: string, usage: Record<string, unknown> = USAGE, choiceExtra: Record<string, unknown> = {}) => ({
  id: 'chatcmpl-s',
  object: 'chat.completion',
  created: 1,
  model: 'up-model',
  choices: [{ index: 0, message: { role: 'assistant', ...message }, logprobs: null, finish_reason: finish, ...choiceExtra }],
  usage,
});

/** Removes a test's model and provider (both named `name`) from the catalog. */
export async function dropScriptedModel(name: string): Promise<void> {
  const provider = await Provider.findOne({ where: { name } });
  if (!provider) return;
  await Model.destroy({ where: { providerId: provider.id } });
  await provider.destroy();
  await bumpEpoch(env().redis);
}

/**
 * An OpenAI upstream's refusal of a chat body's strict schemas, as OpenAI answers it (the simulator
 * does not check them): a strict function tool whose `parameters` its strict mode refuses, 400
 * `invalid_function_parameters` "Invalid schema for function '<name>': <why>" at
 * `tools[N].function.parameters`; a strict json_schema `response_format`, "Invalid schema for
 * response_format '<name>': <why>" at `response_format` (OpenAI's words and places as
 * shared/json-schema/tool-schemas.ts quotes them, its reasons by that module's check). Undefined when it takes them.
 */
export function openAiStrictRefusal(body: { tools?: unknown; response_format?: unknown }): Reply | undefined {
  const refuse = (message: string, param: string, code: string | null): Reply => ({ kind: 'json', status: 400, body: { error: { message, type: 'invalid_request_error', param, code } } });
  const tools = Array.isArray(body.tools) ? (body.tools as Array<{ function?: { name?: string; parameters?: Record<string, unknown>; strict?: boolean } }>) : [];
  for (const [i, t] of tools.entries()) {
    const problem = t.function?.strict === true && t.function.parameters ? parametersProblem(t.function.parameters, true) : undefined;
    if (problem) return refuse(`Invalid schema for function '${t.function!.name}': ${problem}`, `tools[${i}].function.parameters`, 'invalid_function_parameters');
  }
  const spec = (body.response_format as { json_schema?: { name?: string; schema?: Record<string, unknown>; strict?: boolean } } | undefined)?.json_schema;
  const problem = spec?.strict === true && spec.schema ? parametersProblem(spec.schema, true, 'response_format') : undefined;
  return problem ? refuse(`Invalid schema for response_format '${spec!.name}': ${problem}`, 'response_format', null) : undefined;
}
