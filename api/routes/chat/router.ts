import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../../context';
import { only } from '../only';
import { requireJson } from '../../middleware/require-json';
import { jsonBody } from '../../middleware/body';
import { refuseUnknownFields, validate } from '../../validate';
import { chatRefusal } from '../openai-words';
import { chatSchema, completionsSchema, effortValueMessage, REASONING_EFFORTS } from './schema';
import { plainChatBody } from './fast-check';
import { dispatchChat, resolveChatModel } from '../../dispatch/chat';
import { refuseAsModelKind } from '../../dispatch/route';
import type { CatalogModel } from '../../../shared/catalog/catalog';
import { completionsToChat } from '../../../workers/providers/anthropic/completions';
import { forwardsCallerKey } from '../../dispatch/passthrough';
import { audioAsked, refuseUnpricedAudio } from '../../../shared/catalog/audio-prices';
import { refuseSharedAccountIds } from './shared-account-ids';
import { scanMessages } from './messages-scan';
import { SseWriter, failStream } from '../../sse';
import { streamThroughCache, throughCache } from '../../dispatch/response-cache';
import { ApiError } from '../../../shared/errors/ApiError';
import { withRefusal } from './refusal';
import { openaiError } from '../../middleware/error-body';
import { merged } from '../../../shared/merged';
import { checkMetadata, deleteChat, getChat, listChatMessages, listChats, storeChat, updateChat } from './stored';
import { StreamedCompletion, withoutUsage } from './stream-completion';
import { effortLevels, refuseEffortLevel } from '../../../shared/catalog/effort-levels';
import { askedTier, chunkWithServedTier, withServedTier } from './service-tier';
import { refuseInvalidResponseSchema, refuseInvalidToolSchemas } from '../../../shared/json-schema/tool-schemas';

type Body = { model: string; stream?: boolean; stream_options?: { include_usage?: boolean } | null } & Record<string, unknown>;

/**
 * The fields of OpenAI's CreateCompletionRequest (its API document, vendored in
 * test/fixtures/vendor/openai/openapi.json): OpenAI refuses any other as an unrecognized argument.
 */
const COMPLETION_FIELDS = ['model', 'prompt', 'best_of', 'echo', 'frequency_penalty', 'logit_bias', 'logprobs', 'max_tokens', 'n', 'presence_penalty', 'seed', 'stop', 'stream', 'stream_options', 'suffix', 'temperature', 'top_p', 'user'] as const;

/**
 * Legacy completions reach non-OpenAI upstreams through the chat translation, which has one prompt
 * and plain text: what it cannot express is refused before a lane lease is taken. A field outside
 * OpenAI's CreateCompletionRequest (a chat field such as `reasoning_effort`, which the translation
 * dropped) is refused as OpenAI refuses it, and what the kind's chat adapter would refuse of the
 * translated body (Bedrock's penalties, a blank stop sequence) is refused here rather than in the worker.
 */
function checkTranslatableCompletion(body: Record<string, unknown>, model: CatalogModel): void {
  refuseUnknownFields(body, COMPLETION_FIELDS, " Legacy completions on this model take the fields of OpenAI's CreateCompletionRequest only.");
  const p = body.prompt;
  if (Array.isArray(p) && (p.length !== 1 || typeof p[0] !== 'string')) {
    throw new ApiError(400, 'unsupported_parameter', 'On this model `prompt` must be one string (token-id and batched prompts need an OpenAI-compatible upstream).', { param: 'prompt' });
  }
  if (body.max_tokens === 0) {
    throw new ApiError(400, 'unsupported_parameter', '`max_tokens` 0 (scoring a prompt with `echo` and `logprobs`, generating nothing) needs an OpenAI-compatible upstream; on this model `max_tokens` must be at least 1.', { param: 'max_tokens' });
  }
  for (const k of ['echo', 'suffix', 'logprobs', 'best_of', 'logit_bias'] as const) {
    const v = body[k];
    if (v !== undefined && v !== null && v !== false && !(k === 'best_of' && v === 1)) {
      throw new ApiError(400, 'unsupported_parameter', `\`${k}\` is not supported for legacy completions on this model.`, { param: k });
    }
  }
  if (typeof body.n === 'number' && body.n > 1) throw new ApiError(400, 'unsupported_parameter', '`n` above 1 is not supported for legacy completions on this model.', { param: 'n' });
  refuseAsModelKind(model, completionsToChat(body));
}

/**
 * A chat request's own `reasoning_effort` on a model whose config says its upstream takes none
 * (`config.reasoning_effort: false`, docs/catalog.md): refused 400 `unsupported_parameter`, as OpenAI
 * refuses it on a model without reasoning, rather than sent to be refused upstream or dropped. (The
 * messages and responses dialects leave out the effort they map instead: their clients send one
 * always; api/dialects/canonical.ts forModel.) A level the config's list of levels leaves out is
 * refused the same way, in every dialect (refuseEffortLevel).
 */
function refuseUnwantedEffort(body: Record<string, unknown>, config: Record<string, unknown> | undefined): void {
  // a string outside OpenAI's ReasoningEffort: its 400 invalid_value (schema.ts), unless the model's config lists it as a level its upstream takes
  const effort = body.reasoning_effort;
  if (typeof effort === 'string' && !(REASONING_EFFORTS as readonly string[]).includes(effort) && !(effortLevels(config) || []).includes(effort)) {
    throw new ApiError(400, 'invalid_value', effortValueMessage(effort), { param: 'reasoning_effort' });
  }
  if (config?.reasoning_effort === false && body.reasoning_effort !== undefined && body.reasoning_effort !== null) {
    throw new ApiError(400, 'unsupported_parameter', '`reasoning_effort` is not supported on this model.', { param: 'reasoning_effort' });
  }
  refuseEffortLevel(body.reasoning_effort, config, 'reasoning_effort');
}

/**
 * OpenAI refuses a chat `metadata` unless `store` is true: 400 invalid_request_error naming
 * `metadata`, "The 'metadata' parameter is only allowed when 'store' is enabled." (its answer as
 * quoted in tmc/langchaingo issue 1484, gpt-5-nano, 2026-03, and looplj/axonhub issue 1380,
 * gpt-5.4, 2026-04). The gateway forwarded it and answered. Null is absent; an empty object, which
 * labels nothing, is let through (OpenAI's handling of it is not known).
 */
const METADATA_WITHOUT_STORE = "The 'metadata' parameter is only allowed when 'store' is enabled.";
function refuseMetadataWithoutStore(body: Record<string, unknown>): void {
  const m = body.metadata;
  if (m === undefined || m === null || body.store === true) return;
  if (typeof m === 'object' && !Array.isArray(m) && Object.keys(m).length === 0) return;
  throw new ApiError(400, 'invalid_request', METADATA_WITHOUT_STORE, { param: 'metadata' });
}

/** The JSON answer of a chat or legacy completions job (a chat answer with its refusal field, and the tier it was served in when asked: service-tier.ts). */
const answerOf = (operation: 'chat' | 'completions', result: unknown, tier: boolean) => (operation === 'chat' ? (tier ? withServedTier(withRefusal(result)) : withRefusal(result)) : result);

/** One handler for chat and legacy completions: they differ only in schema and upstream path. */
function handler(ctx: AppContext, operation: 'chat' | 'completions') {
  const schema = operation === 'chat' ? chatSchema : completionsSchema;
  return async (req: Request, res: Response) => {
    // the common chat body is checked without Joi; anything else, and every refusal, is Joi's (fast-check.ts), in OpenAI's codes and words (openai-words.ts)
    const body = ((operation === 'chat' && plainChatBody(req.body)) || validate<Body>(schema, req.body, 'invalid_request', false, chatRefusal)) as Body;
    const resolved = await resolveChatModel(ctx, req, body.model, operation === 'chat' ? 'chat' : undefined);
    if (operation === 'completions' && !['openai', 'azure'].includes(resolved.model.provider.kind)) checkTranslatableCompletion(body, resolved.model);
    if (operation === 'chat') {
      refuseUnwantedEffort(body, resolved.model.config);
      refuseMetadataWithoutStore(body);
      // function tools' `parameters` (and the legacy functions'), a json_schema response format's schema: what OpenAI refuses (../tool-schemas.ts); only when sent
      if (body.tools !== undefined) refuseInvalidToolSchemas(body.tools, 'chat');
      if (body.functions !== undefined) refuseInvalidToolSchemas(body.functions, 'functions');
      if (body.response_format) refuseInvalidResponseSchema(body.response_format, 'chat');
    }
    // the caller's own key, when its provider takes one (refused here, before the answer cache is read)
    const passthrough = forwardsCallerKey(req, resolved.model);
    // on the platform's credential, one pass over the messages' parts for the two checks below (messages-scan.ts)
    const scan = operation === 'chat' && !passthrough ? scanMessages(body) : undefined;
    // ids an OpenAI-compatible upstream resolves in the account it is called with: the platform's is every organization's (shared-account-ids.ts)
    if (scan) refuseSharedAccountIds(body, scan);
    // audio (output, or input_audio parts) on the platform's credential: refused unless the model prices it, then billed at that price (audio-prices.ts)
    const audio = scan ? audioAsked(body, scan.inputAudio) : undefined;
    if (audio) refuseUnpricedAudio(resolved.model, audio);
    const stream = body.stream === true;
    const tier = operation === 'chat' && askedTier(body);
    // `store: true` (chat only): the completion is kept for the stored completions endpoints; its metadata is checked before anything runs
    const metadata = operation === 'chat' && body.store === true ? checkMetadata(body.metadata) : undefined;
    const common = {
      resolved,
      operation,
      body,
      stream,
      includeUsage: !!body.stream_options?.include_usage,
      passthrough,
      audio,
    };
    if (!stream) {
      // `SERVICE-CACHE` (an exact-match answer cache, opted into per request): checked only when sent, off the common path
      const answer =
        req.headers['service-cache'] !== undefined && !metadata
          ? await throughCache(ctx, req, res, body, async () => answerOf(operation, await dispatchChat(ctx, req, res, common), tier))
          : answerOf(operation, await dispatchChat(ctx, req, res, common), tier);
      // stored before the answer goes out, so that a retrieve right after it finds it
      if (metadata) await storeChat(req, body, answer as Record<string, unknown>, metadata);
      res.json(answer);
      return;
    }
    const sse = new SseWriter(res);
    const kept = metadata ? new StreamedCompletion() : undefined;
    // a kept stream is asked for its usage (OpenAI keeps a streamed completion's usage), shown only if the client asked
    const hideUsage = !!kept && !common.includeUsage;
    try {
      const sent = kept ? (d: string) => sendKept(kept, d, hideUsage, sse) : (d: string) => sse.send(d);
      const send = tier ? (d: string) => sent(chunkWithServedTier(d)) : sent;
      // `SERVICE-CACHE` on a stream: its chunks kept and replayed (api/dispatch/response-cache.ts); off the common path
      if (req.headers['service-cache'] !== undefined && !metadata) await streamThroughCache(ctx, req, res, body, send, (onChunk) => dispatchChat(ctx, req, res, merged(common, { onChunk })) as Promise<void>);
      else await dispatchChat(ctx, req, res, merged(common, { onChunk: send, includeUsage: common.includeUsage || hideUsage }));
      if (kept) await storeChat(req, body, kept.completion(), metadata!);
      sse.send('[DONE]');
      sse.end();
    } catch (err) {
      // Headers are out: report the failure in-band, as OpenAI does, and close the stream.
      failStream(sse, err, (e) => sse.send(JSON.stringify({ error: openaiError(e) })));
    }
  };
}

/** A chunk of a kept stream: added to the completion kept, then sent (without its usage when the client did not ask for it). */
function sendKept(kept: StreamedCompletion, data: string, hideUsage: boolean, sse: SseWriter): void {
  const chunk = kept.push(data);
  const out = hideUsage && chunk ? withoutUsage(chunk) : undefined;
  if (out !== null) sse.send(out ?? data);
}

export function chatRouter(ctx: AppContext): Router {
  const r = Router();
  const body = jsonBody('20mb');
  only(r, '/v1/chat/completions', { post: [body, requireJson, handler(ctx, 'chat')], get: listChats });
  // OpenAI's stored completions: what `store: true` kept (stored.ts)
  only(r, '/v1/chat/completions/:id', { get: getChat, post: [body, requireJson, updateChat], delete: deleteChat });
  only(r, '/v1/chat/completions/:id/messages', { get: listChatMessages });
  only(r, '/v1/completions', { post: [body, requireJson, handler(ctx, 'completions')] });
  return r;
}
