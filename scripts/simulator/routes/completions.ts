import { Router, type Request, type Response } from 'express';
import type { KnobStore } from '../knobs';
import type { RequestLog } from '../request-log';
import { applyFaults, sleep } from '../faults';
import { countTokens, replyWords } from '../text';

/** OpenAI legacy completions, JSON and streamed. */
export function completionsRoutes(knobs: KnobStore, log: RequestLog): Router {
  const r = Router();
  r.post('/v1/completions', async (req: Request, res: Response) => {
    log.record(req, res);
    const body = req.body as Record<string, unknown>;
    const model = String(body.model ?? '');
    const k = knobs.take(model);
    if (await applyFaults(k, res)) return;
    const prompt = Array.isArray(body.prompt) ? body.prompt.map(String).join(' ') : String(body.prompt ?? '');
    // `max_tokens: 0` generates nothing (OpenAI's documented minimum); `echo` puts the prompt before the completion
    const zero = body.max_tokens === 0 && !k.zeroCapUnlimited;
    const generated = zero ? [] : replyWords(prompt, k.outputWords ?? 12, body.max_tokens === 0 ? undefined : (body.max_tokens as number | undefined));
    const words = body.echo === true ? [prompt, ...generated] : generated;
    const text = words.join(' ');
    const usage = { prompt_tokens: countTokens(prompt), completion_tokens: countTokens(generated.join(' ')), total_tokens: 0 };
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    const id = `cmpl-sim${Date.now().toString(36)}`;
    const created = Math.floor(Date.now() / 1000);
    if (body.stream !== true) {
      res.json({ id, object: 'text_completion', created, model, choices: [{ index: 0, text, logprobs: null, finish_reason: zero ? 'length' : 'stop' }], usage });
      return;
    }
    res.status(200).setHeader('Content-Type', 'text/event-stream');
    res.flushHeaders();
    for (let i = 0; i < words.length; i++) {
      if (res.destroyed) return;
      if (k.dropAfterChunks !== undefined && i >= k.dropAfterChunks) {
        await sleep(20);
        res.socket?.destroy();
        return;
      }
      const last = i === words.length - 1;
      res.write(`data: ${JSON.stringify({ id, object: 'text_completion', created, model, choices: [{ index: 0, text: i ? ` ${words[i]}` : words[i], logprobs: null, finish_reason: last ? 'stop' : null }] })}\n\n`);
      if (k.tokenDelayMs) await sleep(k.tokenDelayMs);
    }
    if ((body.stream_options as { include_usage?: boolean } | undefined)?.include_usage) {
      res.write(`data: ${JSON.stringify({ id, object: 'text_completion', created, model, choices: [], usage })}\n\n`);
    }
    res.end('data: [DONE]\n\n');
  });
  return r;
}
