import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../../context';
import { only } from '../only';
import { requireJson } from '../../middleware/require-json';
import { jsonBody } from '../../middleware/body';
import { validate } from '../../validate';
import { countTokensSchema, messagesSchema } from './schema';
import { requireAnthropicVersion } from './version';
import { anthropicBeta } from './beta';
import { dispatchChat, resolveChatModel } from '../../dispatch/chat';
import { allNativeMessages } from '../../dispatch/route';
import { SseWriter } from '../../sse';
import { streamError } from './stream-error';
import { answerNative } from './native';
import { messagesNativeTools } from '../../dialects/messages/native';
import { messagesToCanonical, refuseEmptyContent, type MessagesRequest } from '../../dialects/messages/request';
import { canonicalToMessage } from '../../dialects/messages/response';
import { MessagesStreamTranslator } from '../../dialects/messages/stream';
import { countMessagesTokens } from '../../dialects/messages/count-tokens';
import { countInLane } from '../../dispatch/count-lane';
import { forModel, type CanonicalChunk, type CanonicalCompletion } from '../../dialects/canonical';
import { merged } from '../../../shared/merged';
import { streamThroughCache, throughCache, type StreamSend } from '../../dispatch/response-cache';

function createHandler(ctx: AppContext) {
  return async (req: Request, res: Response) => {
    const body = validate<MessagesRequest>(messagesSchema, req.body);
    refuseEmptyContent(body);
    const beta = anthropicBeta(req);
    const resolved = await resolveChatModel(ctx, req, body.model);
    const publicModel = resolved.requestedId;
    const native = messagesNativeTools(body);
    if (native.set.search || native.set.fetch) return answerNative(ctx, req, res, body, resolved, native.set, native.rest);
    const stream = body.stream === true;
    // Native bypass: an Anthropic-native upstream takes the request unchanged (model swapped in the worker).
    const bypass = await allNativeMessages(ctx, resolved.model);
    const common = {
      resolved,
      operation: bypass ? ('messages' as const) : ('chat' as const),
      body: bypass ? { ...body } : forModel(messagesToCanonical(body, { cacheHints: resolved.model.provider.kind === 'bedrock' }), resolved.model.config),
      stream,
      includeUsage: true,
      passthrough: false,
      // Beta features tune an Anthropic upstream; a translated upstream has none (docs/dialects.md).
      anthropicBeta: bypass ? beta : undefined,
    };
    if (!stream) {
      const answer = async () => {
        const result = await dispatchChat(ctx, req, res, common);
        return bypass ? result : canonicalToMessage(result as CanonicalCompletion, publicModel, undefined, body.stop_sequences);
      };
      // `SERVICE-CACHE`: the exact-match answer cache, opted into per request (api/dispatch/response-cache.ts)
      res.json(await throughCache(ctx, req, res, req.body, answer));
      return;
    }
    const sse = new SseWriter(res);
    const translator = bypass ? undefined : new MessagesStreamTranslator(publicModel, undefined, body.stop_sequences);
    const streamed = async (send: StreamSend) => {
      await dispatchChat(ctx, req, res, merged(common, {
        onChunk: (d: string) => {
          if (!translator) {
            send(d, (JSON.parse(d) as { type: string }).type);
            return;
          }
          for (const ev of translator.push(JSON.parse(d) as CanonicalChunk)) send(JSON.stringify(ev), ev.type);
        },
      }));
      if (translator) for (const ev of translator.end()) send(JSON.stringify(ev), ev.type);
    };
    try {
      // `SERVICE-CACHE` on a stream: its events kept and replayed (api/dispatch/response-cache.ts)
      await streamThroughCache(ctx, req, res, req.body, (data, event) => sse.send(data, event), streamed);
      sse.end();
    } catch (err) {
      streamError(sse, err);
    }
  };
}

/** `count_tokens`: counted locally in the count lane (api/dispatch/count-lane.ts). */
function countTokensHandler(ctx: AppContext) {
  return async (req: Request, res: Response) => {
    const body = validate<MessagesRequest>(countTokensSchema, req.body);
    const resolved = await resolveChatModel(ctx, req, body.model);
    res.json({ input_tokens: await countInLane(ctx, req, () => countMessagesTokens(resolved.model.tokenizer, body)) });
  };
}

/**
 * The messages dialect: `POST /v1/messages` and `POST /v1/messages/count_tokens`. It reads its own
 * body so that even a malformed body is answered in the messages envelope.
 */
export function messagesRouter(ctx: AppContext): Router {
  const r = Router();
  r.use('/v1/messages', jsonBody('20mb'));
  only(r, '/v1/messages', { post: [requireJson, requireAnthropicVersion, createHandler(ctx)] });
  only(r, '/v1/messages/count_tokens', { post: [requireJson, requireAnthropicVersion, countTokensHandler(ctx)] });
  return r;
}
