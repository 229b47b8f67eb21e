import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../../context';
import { only } from '../only';
import { requireJson } from '../../middleware/require-json';
import { jsonBody, rawLacksWatched } from '../../middleware/body';
import { validate } from '../../validate';
import { countTokensSchema, messagesSchema } from './schema';
import { requireAnthropicVersion } from './version';
import { anthropicBeta } from './beta';
import { refuseThinkingBudget } from './thinking-budget';
import { refuseNativeOnly } from './native-only';
import { dropSharedMessageIds, refuseSharedAccountIds, sharedAccountIds } from './shared-account-ids';
import { ownedHandedIds } from '../../../shared/tenancy/handed-out-ids';
import { refuseInvalidInputSchemas } from './input-schemas';
import { refuseUnsupportedStrictSchemas } from './strict-schemas';
import { refuseCitationsWithFormat } from './citations-format';
import { dispatchChat, resolveChatModel } from '../../dispatch/chat';
import { allNativeMessages } from '../../dispatch/route';
import type { WorkspacePin } from '../../dispatch/workspace-pin';
import { SseWriter } from '../../sse';
import { streamError } from './stream-error';
import { pingWhenQuiet } from './ping';
import { answerNative } from './native';
import { billedAnswer } from './no-resend';
import { messagesNativeTools } from '../../dialects/messages/native';
import { messagesToCanonical, refuseEmptyContent, type MessagesRequest } from '../../dialects/messages/request';
import { canonicalToMessage, reasoningShown } from '../../dialects/messages/response';
import { MessagesStreamTranslator, type MessagesEvent } from '../../dialects/messages/stream';
import { CountedStart, inputEstimate } from './counted-start';
import { countMessagesTokens } from '../../dialects/messages/count-tokens';
import { countInLane } from '../../dispatch/count-lane';
import { forModel, type CanonicalChunk, type CanonicalCompletion } from '../../dialects/canonical';
import { refuseEffortLevel } from '../../../shared/catalog/effort-levels';
import { merged } from '../../../shared/merged';
import { applyContextEdits, clearedTokens, contextEditsOf } from '../../dialects/messages/context-editing';
import { compactEditOf } from '../../dialects/messages/compaction';
import { compactionIfDue, pausedAnswer, withCompaction, type MessagesCompaction } from './compaction';
import { addUsageToRow } from '../../middleware/request-log';
import { afterCompaction } from '../../dispatch/summarise';
import { streamThroughCache, throughCache, type StreamSend } from '../../dispatch/response-cache';

function createHandler(ctx: AppContext) {
  return async (req: Request, res: Response) => {
    const body = validate<MessagesRequest>(messagesSchema, req.body);
    refuseEmptyContent(body);
    // a custom tool's input_schema Anthropic refuses, in its words, on every upstream (input-schemas.ts)
    refuseInvalidInputSchemas(body.tools);
    // strict tools' and the output format's schemas Anthropic's structured outputs refuse, in its words (strict-schemas.ts)
    refuseUnsupportedStrictSchemas(body, { limits: true });
    // an output format with citations enabled on a document, as Anthropic refuses it (citations-format.ts)
    refuseCitationsWithFormat(body);
    const beta = anthropicBeta(req);
    // a manual thinking budget at or above max_tokens, as Anthropic refuses it (unless interleaved thinking), on every upstream
    refuseThinkingBudget(body, beta);
    const resolved = await resolveChatModel(ctx, req, body.model);
    // an effort level the model's config does not list, native bypass or not (shared/catalog/effort-levels.ts)
    refuseEffortLevel(body.output_config?.effort, resolved.model.config, 'output_config.effort');
    const publicModel = resolved.requestedId;
    const native = messagesNativeTools(body);
    // the gateway runs the search loop whatever the upstream, so it compacts there too (compact_20260112)
    if (native.set.search || native.set.fetch) {
      refuseNativeOnly(req, body, false);
      return answerNative(ctx, req, res, body, resolved, native.set, native.rest, compactEditOf(body));
    }
    const stream = body.stream === true;
    // Native bypass: an Anthropic-native upstream takes the request unchanged (model swapped in the worker).
    const bypass = await allNativeMessages(ctx, resolved.model);
    // `max_tokens: 0` (cache pre-warming) and `mcp_servers`: for an Anthropic-native upstream only (native-only.ts)
    refuseNativeOnly(req, body, bypass);
    // ids Anthropic resolves in the platform's workspace, shared by every organization, but those it handed this one (shared-account-ids.ts)
    let pin: WorkspacePin | undefined;
    if (bypass) {
      // the blocks are walked for file ids only when the raw body holds `file_id`; nothing is awaited when no id is named
      const named = sharedAccountIds(body as unknown as Record<string, unknown>, !rawLacksWatched(req));
      // those handed out go only to the workspace that made them (its provider's deployments: api/dispatch/workspace-pin.ts)
      if (named) pin = await refuseSharedAccountIds(named, (ids) => ownedHandedIds(ctx.redis, req.auth!.orgId, ids));
      dropSharedMessageIds(body as unknown as Record<string, unknown>);
    }
    // Anthropic's context editing (`context_management.edits`): an Anthropic-native upstream applies it itself; a translated one gets what it leaves (context-editing.ts)
    const edits = bypass ? undefined : contextEditsOf(body);
    const canonical = bypass ? undefined : forModel(messagesToCanonical(body, { cacheHints: resolved.model.provider.kind === 'bedrock' }), resolved.model.config);
    // applied where the request runs, not before the answer cache is read (a hit needs none of it)
    const editContext = async () => {
      const applied = edits && canonical ? await applyContextEdits(canonical, resolved.model.tokenizer, edits) : undefined;
      return applied ? { applied_edits: applied } : undefined;
    };
    // Anthropic's server-side compaction (`compact_20260112`) on a translated upstream (compaction.ts), after the other edits
    const compact = bypass ? undefined : compactEditOf(body);
    const compactContext = async () => (canonical ? compactionIfDue(ctx, req, res, resolved, canonical, compact) : undefined);
    // after a compaction pass the answer is the request's second job (its row carries both: addToRow)
    const answerJob = (compacted: MessagesCompaction | undefined) => (compacted ? merged(common, afterCompaction(req)) : common);
    const common = {
      resolved,
      operation: bypass ? ('messages' as const) : ('chat' as const),
      body: canonical ?? { ...body },
      stream,
      includeUsage: true,
      passthrough: false,
      // Beta features tune an Anthropic upstream; a translated upstream has none (docs/dialects.md).
      anthropicBeta: bypass ? beta : undefined,
      pin,
    };
    if (!stream) {
      const generate = async () => {
        const managed = await editContext();
        const compacted = await compactContext();
        if (compacted && compact!.pause) return pausedAnswer(compacted, publicModel, managed);
        const result = await dispatchChat(ctx, req, res, answerJob(compacted));
        if (bypass) return result;
        const usage = (result as CanonicalCompletion).usage;
        if (compacted) addUsageToRow(res, usage);
        const message = canonicalToMessage(result as CanonicalCompletion, publicModel, undefined, body.stop_sequences, reasoningShown(body.thinking));
        if (compacted) withCompaction(message, compacted, usage, publicModel);
        return managed ? Object.assign(message, { context_management: managed }) : message;
      };
      // not sent again by the SDK should its body break off: it was generated and billed (no-resend.ts)
      const answer = async () => billedAnswer(res, await generate());
      // `SERVICE-CACHE`: the exact-match answer cache, opted into per request (api/dispatch/response-cache.ts)
      res.json(await throughCache(ctx, req, res, req.body, answer));
      return;
    }
    const sse = new SseWriter(res);
    const streamed = async (send: StreamSend) => {
      // a `ping` after a quiet spell, before the first event too (ping.ts); not kept by the answer cache
      pingWhenQuiet(sse);
      const managed = await editContext();
      const compacted = await compactContext();
      const translator = bypass ? undefined : new MessagesStreamTranslator(publicModel, undefined, body.stop_sequences, managed, reasoningShown(body.thinking));
      if (compacted && translator) {
        for (const ev of translator.compaction(compacted.summary, compacted.usage)) send(JSON.stringify(ev), ev.type);
        if (compact!.pause) {
          for (const ev of translator.end(true)) send(JSON.stringify(ev), ev.type);
          return;
        }
      }
      const sendEvent = (ev: MessagesEvent) => send(JSON.stringify(ev), ev.type);
      // message_start's input_tokens as count_tokens counts the request (counted-start.ts); after a compaction its message_start is out already
      const counted = translator && !compacted ? new CountedStart((signal) => inputEstimate(resolved.model.tokenizer, body, clearedTokens(managed), signal), sendEvent) : undefined;
      const emit = (events: MessagesEvent[]) => (counted ? counted.push(events) : events.forEach(sendEvent));
      try {
        await dispatchChat(ctx, req, res, merged(answerJob(compacted), {
          onChunk: (d: string) => {
            if (!translator) {
              send(d, (JSON.parse(d) as { type: string }).type);
              return;
            }
            emit(translator.push(JSON.parse(d) as CanonicalChunk));
          },
        }));
      } finally {
        // what was held goes out before the closing events, or before the error event of a failure
        await counted?.settle();
      }
      if (compacted) addUsageToRow(res, translator?.answerUsage);
      if (translator) emit(translator.end());
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
    refuseInvalidInputSchemas(body.tools);
    refuseUnsupportedStrictSchemas(body, { limits: false });
    const resolved = await resolveChatModel(ctx, req, body.model);
    const counted = await countInLane(ctx, req, () => countMessagesTokens(resolved.model.tokenizer, body));
    // with context editing asked, what a translated upstream would be sent once edited, and the count before it
    const edits = contextEditsOf(body);
    if (!edits?.length || (await allNativeMessages(ctx, resolved.model))) return void res.json({ input_tokens: counted });
    const canonical = forModel(messagesToCanonical(body, {}), resolved.model.config);
    const freed = clearedTokens(await applyContextEdits(canonical, resolved.model.tokenizer, edits));
    res.json({ input_tokens: Math.max(0, counted - freed), context_management: { original_input_tokens: counted } });
  };
}

/**
 * The messages dialect: `POST /v1/messages` and `POST /v1/messages/count_tokens`. It reads its own
 * body so that even a malformed body is answered in the messages envelope.
 */
export function messagesRouter(ctx: AppContext): Router {
  const r = Router();
  // Anthropic's cap for the Messages and Token Counting APIs (its API overview: "32 MB", 413 request_too_large past it);
  // whether the bytes hold `file_id` is noted, for the native bypass's file sources (shared-account-ids.ts)
  r.use('/v1/messages', jsonBody('32mb', 'file_id'));
  only(r, '/v1/messages', { post: [requireJson, requireAnthropicVersion, createHandler(ctx)] });
  only(r, '/v1/messages/count_tokens', { post: [requireJson, requireAnthropicVersion, countTokensHandler(ctx)] });
  return r;
}
