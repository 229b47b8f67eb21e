import { randomUUID } from 'crypto';
import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../../context';
import { only } from '../only';
import { requireJson } from '../../middleware/require-json';
import { validate } from '../../validate';
import { dispatchChat, resolveChatModel, type ChatDispatch } from '../../dispatch/chat';
import { SseWriter, failStream } from '../../sse';
import { forModel, type CanonicalChunk, type CanonicalCompletion } from '../../dialects/canonical';
import { cohereChatSchema, cohereToCanonical, type CohereChatRequest } from '../../dialects/cohere/request';
import { canonicalToCohere } from '../../dialects/cohere/response';
import { CohereStreamTranslator, type CohereEvent } from '../../dialects/cohere/stream';
import { ApiError } from '../../../shared/errors/ApiError';
import { cohereV1ChatSchema, cohereV1ToCanonical, type CohereV1ChatRequest } from '../../dialects/cohere/v1-request';
import { canonicalToCohereV1 } from '../../dialects/cohere/v1-response';
import { CohereV1StreamTranslator } from '../../dialects/cohere/v1-stream';
import { streamThroughCache, throughCache, type StreamSend } from '../../dispatch/response-cache';

/**
 * `POST /v2/chat`: Cohere's v2 chat (`CohereClientV2.chat` and `chatStream`) over the chat pool, the
 * request translated to the canonical one (dialects/cohere/request.ts) and the answer back, for any
 * chat model of the catalog: the same lanes, limits, usage and request log as the other dialects.
 */
function chatHandler(ctx: AppContext) {
  return async (req: Request, res: Response) => {
    const body = validate<CohereChatRequest>(cohereChatSchema, req.body);
    const resolved = await resolveChatModel(ctx, req, body.model);
    const canonical = forModel(cohereToCanonical(body), resolved.model.config);
    const stream = body.stream === true;
    const common = { resolved, operation: 'chat' as const, body: canonical as unknown as Record<string, unknown>, stream, includeUsage: true, passthrough: false };
    if (!stream) {
      // `SERVICE-CACHE`: the exact-match answer cache, opted into per request (api/dispatch/response-cache.ts)
      res.json(await throughCache(ctx, req, res, body, async () => canonicalToCohere((await dispatchChat(ctx, req, res, common)) as CanonicalCompletion, req.id, body.stop_sequences)));
      return;
    }
    // a failure after the stream started ends it with message-end, finish reason ERROR and the error's message
    await streamEvents(ctx, req, res, body, common, new SseWriter(res), new CohereStreamTranslator(req.id, body), (ev: CohereEvent) => ev.type);
  };
}

/** A Cohere stream translator: its events for each chunk, at the end, and for a failure after the stream started. */
interface EventTranslator<E> {
  push(chunk: CanonicalChunk): E[];
  end(): E[];
  failed(message: string): E[];
}

/**
 * Streams a chat job through a Cohere translator (v2's or v1's), each event written with its SSE
 * event name (`named`; v1's events have none), kept and replayed by the answer cache; a failure after
 * the stream started ends it with the translator's own closing events.
 */
async function streamEvents<E>(ctx: AppContext, req: Request, res: Response, body: unknown, common: ChatDispatch, sse: SseWriter, t: EventTranslator<E>, named: (ev: E) => string | undefined): Promise<void> {
  const streamed = async (send: StreamSend) => {
    const each = (events: E[]) => {
      for (const ev of events) send(JSON.stringify(ev), named(ev));
    };
    await dispatchChat(ctx, req, res, Object.assign({}, common, { onChunk: (d: string) => each(t.push(JSON.parse(d) as CanonicalChunk)) }));
    each(t.end());
  };
  try {
    await streamThroughCache(ctx, req, res, body, (data, event) => sse.send(data, event), streamed);
    sse.end();
  } catch (err) {
    failStream(sse, err, (e) => {
      for (const ev of t.failed(e.message)) sse.send(JSON.stringify(ev), named(ev));
    });
  }
}

/**
 * `POST /v1/chat`: Cohere's v1 chat (`CohereClient.chat` and `chatStream`), translated to the canonical
 * request (dialects/cohere/v1-request.ts) and back, over the same chat pool. Streamed as
 * newline-delimited JSON (the SDK's reading), or as server-sent events when the client sends
 * `Accepts: text/event-stream`.
 */
function v1ChatHandler(ctx: AppContext) {
  return async (req: Request, res: Response) => {
    const body = validate<CohereV1ChatRequest>(cohereV1ChatSchema, req.body);
    if (!body.model) throw new ApiError(400, 'invalid_request', "'model' is required on this gateway (it has no default chat model): name a model of GET /v1/models.", { param: 'model' });
    const resolved = await resolveChatModel(ctx, req, body.model);
    const canonical = forModel(cohereV1ToCanonical(body as CohereV1ChatRequest & { model: string }), resolved.model.config);
    const stream = body.stream === true;
    const ids = { responseId: randomUUID(), generationId: randomUUID() };
    const common = { resolved, operation: 'chat' as const, body: canonical as unknown as Record<string, unknown>, stream, includeUsage: true, passthrough: false };
    if (!stream) {
      res.json(await throughCache(ctx, req, res, body, async () => canonicalToCohereV1((await dispatchChat(ctx, req, res, common)) as CanonicalCompletion, body, ids)));
      return;
    }
    const sse = new SseWriter(res, !/text\/event-stream/i.test(req.get('accepts') ?? ''));
    // a failure after the stream started ends it with stream-end, finish reason ERROR
    await streamEvents(ctx, req, res, body, common, sse, new CohereV1StreamTranslator(body, ids), () => undefined);
  };
}

/**
 * Cohere's chat dialects (`/v2/chat`, and v1's `/v1/chat`), so that `CohereClientV2` and `CohereClient`
 * with the gateway's root as their `environment` chat too.
 */
export function cohereChatRouter(ctx: AppContext): Router {
  const r = Router();
  only(r, '/v2/chat', { post: [requireJson, chatHandler(ctx)] });
  only(r, '/v1/chat', { post: [requireJson, v1ChatHandler(ctx)] });
  return r;
}
