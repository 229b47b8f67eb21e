import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../../context';
import { only } from '../only';
import { ApiError } from '../../../shared/errors/ApiError';
import { requireJson } from '../../middleware/require-json';
import { validate } from '../../validate';
import { modelRequiredRefusal, responsesRefusal } from '../openai-words';
import { refuseInvalidResponsesSchemas } from './request-schemas';
import { inputTokensSchema, responsesSchema } from './schema';
import { findStored, storeResponse } from './store';
import { historyFor, recordInConversation } from './conversation';
import { dispatchChat, resolveChatModel } from '../../dispatch/chat';
import { ClientGone } from '../../dispatch/run-job';
import { SseWriter } from '../../sse';
import { configuredBy, notePlaces, refuseChoiceWithoutItsTool, refuseUnhonoured, responsesToCanonical, wantsLogprobs, type ResponsesRequest } from '../../dialects/responses/request';
import { canonicalToResponse, type ResponseFrame } from '../../dialects/responses/response';
import { answeredResponse } from '../../dialects/responses/client-view';
import { ResponsesStreamTranslator } from '../../dialects/responses/stream';
import { addUsage, forModel, type CanonicalChunk, type CanonicalCompletion } from '../../dialects/canonical';
import { refuseEffortLevel } from '../../../shared/catalog/effort-levels';
import { responsesNativeTools } from '../../dialects/responses/native';
import { answerNative } from './native';
import { deleteResponse, listInputItems } from './input-items';
import { includeOf, shownResponse } from './include';
import { endFailedStream } from './failed';
import { merged } from '../../../shared/merged';
import { countInLane } from '../../dispatch/count-lane';
import { countCanonicalTokens } from '../../dialects/responses/count-tokens';
import { responseFrame } from './background-resume';
import { cancelHandler, chatWork, checkBackground, startBackground } from './background';
import { followBackground } from './background-stream';
import { compactHandler, openCompactions } from './compact';
import { truncateToFit } from './truncation';
import { refuseCallWithoutOutput, refuseOutputWithoutCall } from '../../dialects/responses/call-pairing';
import { resolveItemReferences } from './item-reference';
import { compactIfDue, compactionAsked, type Prepare } from './server-compaction';
import { afterCompaction } from '../../dispatch/summarise';
import { addUsageToRow } from '../../middleware/request-log';
import type { OutputItem } from '../../dialects/responses/response';

function createHandler(ctx: AppContext) {
  return async (req: Request, res: Response) => {
    refuseUnhonoured(req.body);
    const sent = validate<ResponsesRequest>(responsesSchema, req.body, 'invalid_request', false, modelRequiredRefusal);
    // function tools' `parameters` (declared or loaded by an item) and json_schema formats (`text.format`, a configuration
    // update's) OpenAI refuses (request-schemas.ts), before anything is looked up, sent or billed (hosted web search too)
    refuseInvalidResponsesSchemas(sent);
    // item references replaced by the stored items they name (404 for one unknown), before anything is sent or billed
    await resolveItemReferences(req, sent);
    notePlaces(sent.input);
    refuseChoiceWithoutItsTool(sent);
    // OpenAI's CreateResponse: `input` may be left out when the history carries the turn (a conversation's items, a previous response)
    if (sent.input === undefined) {
      if (!sent.conversation && !sent.previous_response_id) throw new ApiError(400, 'missing_required_parameter', "Missing required parameter: 'input'.", { param: 'input' });
      sent.input = [];
    }
    const compaction = compactionAsked(sent);
    const body = compaction?.body ?? sent;
    const resolved = await resolveChatModel(ctx, req, body.model, 'responses');
    const history = await historyFor(req, body);
    // the effort in effect: the request's, or the last update's in the history or the input (request.ts configuredBy)
    refuseEffortLevel(configuredBy(body).effort, resolved.model.config, 'reasoning.effort');
    if (!history.length && Array.isArray(body.input) && !body.input.length) throw new ApiError(400, 'invalid_request', "Nothing to answer: no 'input', and the conversation has no items.", { param: 'input' });
    const native = responsesNativeTools(body);
    if (native.set.search && wantsLogprobs(body)) {
      // the hosted search loop's answer is made of several turns: no log probabilities are kept for it
      const param = body.include?.includes('message.output_text.logprobs') ? 'include' : 'top_logprobs';
      throw new ApiError(400, 'unsupported_parameter', 'Log probabilities are not supported with hosted web search.', { param });
    }
    if (body.background === true) checkBackground(req, body);
    if (native.set.search) return answerNative(ctx, req, res, body, resolved, history, native.set, native.rest, compaction?.ask);
    const { canonical, turn } = responsesToCanonical(openCompactions(body, req.auth!.orgId), history);
    refuseOutputWithoutCall(canonical.messages, body.input);
    refuseCallWithoutOutput(canonical.messages, body);
    forModel(canonical, resolved.model.config);
    // server-side compaction, then truncation: before the answer (a background response's, in its run)
    const prepare: Prepare = async (job) => {
      const c = compaction ? await compactIfDue(ctx, req, res, resolved, canonical, compaction.ask, job) : undefined;
      if (body.truncation === 'auto') await truncateToFit(canonical, resolved.model, body.max_output_tokens);
      return c;
    };
    const frame: ResponseFrame = responseFrame(req, resolved.requestedId, body);
    if (body.background === true) {
      const asked = [...history, ...turn];
      return startBackground(ctx, req, res, body, resolved, asked, frame, chatWork(ctx, req, res, resolved, canonical, asked, frame, body.stream === true, prepare));
    }
    const compacted = await prepare({});
    const store = body.store !== false;
    const stream = body.stream === true;
    // what the answer continues, and a follow-up after it: the conversation, or what replaced it when it was compacted
    const asked = compacted ? compacted.context : [...history, ...turn];
    const common = { resolved, operation: 'chat' as const, body: canonical, stream, includeUsage: true, passthrough: false };
    // after a compaction pass the answer is the request's second job (its row carries both: addToRow)
    const job = compacted ? merged(common, afterCompaction(req)) : common;

    if (!stream) {
      const result = (await dispatchChat(ctx, req, res, job)) as CanonicalCompletion;
      if (compacted) addUsageToRow(res, result.usage);
      const { response, assistant } = canonicalToResponse(compacted ? Object.assign({}, result, { usage: addUsage(compacted.usage, result.usage) }) : result, frame);
      if (compacted) (response.output as unknown[]).unshift(compacted.item);
      if (store) await storeResponse(req, response, [...asked, assistant], body);
      await recordInConversation(req, body, response);
      // stored whole; answered as the request's `include` asks (client-view.ts)
      res.json(answeredResponse(response, body));
      return;
    }
    const sse = new SseWriter(res);
    const t = new ResponsesStreamTranslator(frame);
    const send = (events: ReturnType<ResponsesStreamTranslator['end']>) => {
      for (const ev of events) sse.send(JSON.stringify(ev), ev.type);
    };
    try {
      if (compacted) send(t.before(compacted.item as OutputItem, compacted.usage));
      await dispatchChat(ctx, req, res, merged(job, { onChunk: (d: string) => send(t.push(JSON.parse(d) as CanonicalChunk)) }));
      const closing = t.end();
      if (compacted) addUsageToRow(res, t.answerUsage);
      // Stored before the client sees response.completed, so an immediate follow-up finds it.
      if (store) await storeResponse(req, t.final!.response, [...asked, t.final!.assistant], body);
      await recordInConversation(req, body, t.final!.response);
      send(closing);
      sse.end();
    } catch (err) {
      if (err instanceof ClientGone) return;
      if (!sse.isStarted) throw err;
      // Headers are out: the Responses stream ends with response.failed, as OpenAI's does (stored unless store is false).
      await endFailedStream(req, sse, t, err, store ? { conversation: asked, request: body } : undefined);
    }
  };
}

/**
 * `POST /v1/responses/input_tokens`: the input tokens the same request to `POST /v1/responses`
 * would send, counted locally in the count lane (api/dispatch/count-lane.ts) with the model's
 * tokenizer profile; no upstream, nothing billed. Hosted web search (run by the gateway) and its
 * `web_search_call` items are not counted.
 */
function inputTokensHandler(ctx: AppContext) {
  return async (req: Request, res: Response) => {
    refuseUnhonoured(req.body);
    const body = validate<ResponsesRequest>(inputTokensSchema, req.body, 'invalid_request', false, responsesRefusal);
    refuseInvalidResponsesSchemas(body);
    await resolveItemReferences(req, body);
    notePlaces(body.input);
    refuseChoiceWithoutItsTool(body);
    const resolved = body.model ? await resolveChatModel(ctx, req, body.model, 'responses') : undefined;
    const history = await historyFor(req, body);
    const input = typeof body.input === 'string' ? body.input : (body.input ?? []).filter((i) => i.type !== 'web_search_call' && i.type !== 'compaction_trigger');
    const tools = responsesNativeTools(body).rest;
    const hostedChoice = typeof body.tool_choice === 'object' && /^web_search/.test(body.tool_choice.type);
    const counted = merged(body, { input, tools, tool_choice: hostedChoice ? undefined : body.tool_choice }) as unknown as ResponsesRequest;
    const { canonical } = responsesToCanonical(openCompactions(counted, req.auth!.orgId), history);
    const inputTokens = await countInLane(ctx, req, () => countCanonicalTokens(resolved?.model.tokenizer, canonical));
    res.json({ object: 'response.input_tokens', input_tokens: inputTokens });
  };
}

/**
 * The responses dialect: `POST /v1/responses` (also at `/responses`), `POST
 * /v1/responses/input_tokens`, `GET` and `DELETE /v1/responses/{id}`, `GET
 * /v1/responses/{id}/input_items`.
 */
export function responsesRouter(ctx: AppContext): Router {
  const r = Router();
  for (const path of ['/v1/responses', '/responses']) only(r, path, { post: [requireJson, createHandler(ctx)] });
  // before `/v1/responses/:id`, whose other methods answer 405
  only(r, '/v1/responses/input_tokens', { post: [requireJson, inputTokensHandler(ctx)] });
  only(r, '/v1/responses/compact', { post: [requireJson, compactHandler(ctx)] });
  only(r, '/v1/responses/:id', {
    get: async (req, res) => {
      const include = includeOf(req);
      // what `include` adds only when it asks, whatever the create asked (include.ts); with `?stream=true`,
      // in a background stream's events, replayed and followed (background-stream.ts)
      if (req.query.stream === 'true') return followBackground(ctx, req, res, include);
      res.json(shownResponse((await findStored(req, String(req.params.id))).response, include));
    },
    delete: deleteResponse,
  });
  only(r, '/v1/responses/:id/input_items', { get: listInputItems });
  // background responses (background.ts)
  only(r, '/v1/responses/:id/cancel', { post: cancelHandler(ctx) });
  return r;
}
