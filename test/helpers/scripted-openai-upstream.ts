import http from 'http';
import crypto from 'crypto';
import { upsertModel, upsertProvider } from '../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../shared/cache/epoch';
import { env } from './harness';
import { Model, Provider } from '../../shared/db/models';

/** What the scripted upstream answers next: JSON, or server-sent events (each `data` JSON-encoded unless a string). */
export type Script = { kind: 'json'; body: unknown; status?: number } | { kind: 'sse'; events: unknown[]; done?: boolean };

/**
 * An OpenAI-compatible upstream that answers exactly what the test scripted, for wire shapes the
 * simulator never sends (a tool call finished with `stop`, an in-band `error` chunk, ...). Every
 * request body it received is kept in `received`.
 */
export class ScriptedUpstream {
  received: Array<{ path: string; body: any }> = []; // eslint-disable-line @typescript-eslint/no-explicit-any
  next: Script[] = [];
  url = '';
  private server!: http.Server;

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        this.received.push({ path: req.url ?? '', body: text ? JSON.parse(text) : undefined });
        const s = this.next.shift();
        if (!s) {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: 'nothing scripted' } }));
        } else if (s.kind === 'json') {
          res.writeHead(s.status ?? 200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(s.body));
        } else {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          const events = s.events.map((d) => `data: ${typeof d === 'string' ? d : JSON.stringify(d)}\n\n`).join('');
          res.end(events + (s.done === false ? '' : 'data: [DONE]\n\n'));
        }
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  reset(): void {
    this.received = [];
    this.next = [];
  }

  private models: string[] = [];

  /** Stops the server and takes its models out of the catalog (a model whose upstream is gone would fail later suites' checks of every listed model). */
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
    for (const name of this.models.splice(0)) await dropScriptedModel(name);
  }

  /** A chat model of its own (provider kind `openai`) on this upstream; returns the public id. */
  async model(): Promise<string> {
    const id = `scripted-${crypto.randomBytes(4).toString('hex')}`;
    await upsertProvider({ name: id, kind: 'openai', base_url: `${this.url}/v1` } as never);
    await upsertModel({ id, provider: id, upstream: 'up-model', capabilities: { chat: true, vision: true, tools: true, json_schema: true }, prices: { input_token: 1, output_token: 1 } } as never);
    await bumpEpoch(env().redis);
    this.models.push(id);
    return id;
  }
}

/** One chat-completion chunk with one choice. */
export const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) => ({
  id: 'chatcmpl-s',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'up-model',
  choices: [{ index: 0, delta, finish_reason: finish, ...extra }],
});

/** The usage-only chunk that closes a stream asked for `include_usage`. */
export const usageChunk = (usage: Record<string, unknown> = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) => ({
  id: 'chatcmpl-s',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'up-model',
  choices: [],
  usage,
});

/** A chat completion of one choice. */
export const completion = (message: Record<string, unknown>, finish: string, usage: Record<string, unknown> = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }, choiceExtra: Record<string, unknown> = {}) => ({
  id: 'chatcmpl-s',
  object: 'chat.completion',
  created: 1,
  model: 'up-model',
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish, ...choiceExtra }],
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
