import http from 'http';
import { env } from './harness';
import { upsertModel, upsertProvider } from '../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../shared/cache/epoch';
import { dropScriptedModel } from './scripted-openai-upstream';

/** What a scripted upstream answers: a JSON body, or SSE events (named by their `type` for Anthropic). */
export interface Script {
  json?: object;
  events?: object[];
}

export interface ScriptedUpstream {
  /** The public model id served by this upstream. */
  model: string;
  /** Every request body received, oldest first. */
  seen: Array<Record<string, any>>;
  /** What the next requests are answered with (JSON when the request is not streamed, events otherwise). */
  script: Script;
  close(): Promise<void>;
}

/**
 * A local upstream of kind `openai` (chat completions: `data:` lines and `[DONE]`) or `anthropic`
 * (messages: `event:` + `data:`), registered as provider and model `model`, that records each
 * request body and answers with its `script`. The wire shapes are the vendors', written by the test.
 */
export async function scriptedUpstream(model: string, kind: 'openai' | 'anthropic'): Promise<ScriptedUpstream> {
  const up: ScriptedUpstream = { model, seen: [], script: {}, close: async () => undefined };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString('utf8')));
    req.on('end', () => {
      const body = JSON.parse(raw || '{}') as Record<string, any>;
      up.seen.push(body);
      if (!body.stream) return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(up.script.json ?? {}));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const e of up.script.events ?? []) res.write(kind === 'anthropic' ? `event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n` : `data: ${JSON.stringify(e)}\n\n`);
      res.end(kind === 'openai' ? 'data: [DONE]\n\n' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const root = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  await upsertProvider({ name: model, kind, base_url: kind === 'openai' ? `${root}/v1` : root, api_key: 'sk-scripted' });
  await upsertModel({ id: model, provider: model, upstream: 'up', capabilities: { chat: true }, prices: { input_token: 1, output_token: 1 } });
  await bumpEpoch(env().redis);
  up.close = async () => {
    await new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
    await dropScriptedModel(model);
  };
  return up;
}

/** Chat-completion chunks and bodies of a scripted OpenAI-compatible upstream. */
const chunkBase = { id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'up' };
export const chunk = (delta: object, finish: string | null = null) => ({ ...chunkBase, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
export const usageChunk = (prompt: number, completion: number) => ({ ...chunkBase, choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } });
export const completion = (message: object, finish: string) => ({
  id: 'chatcmpl-up',
  object: 'chat.completion',
  created: 1,
  model: 'up',
  choices: [{ index: 0, message: { role: 'assistant', ...message }, logprobs: null, finish_reason: finish }],
  usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
});
