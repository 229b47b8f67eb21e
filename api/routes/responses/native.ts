import type { Request, Response } from 'express';
import type { AppContext } from '../../context';
import type { ResolvedModel } from '../../../shared/catalog/catalog';
import type { CanonicalMessage } from '../../dialects/canonical';
import type { NativeToolSet } from '../../dispatch/native-search/tools';
import { nativeRails, runNativeLoop } from '../../dispatch/native-search/loop';
import { ClientGone } from '../../dispatch/run-job';
import { SseWriter } from '../../sse';
import { responsesToCanonical, type ResponsesRequest } from '../../dialects/responses/request';
import { addUsage, forModel } from '../../dialects/canonical';
import { newId, responseObject, type OutputItem, type ResponseFrame } from '../../dialects/responses/response';
import { transcriptOutput, unfoldSearchCalls } from '../../dialects/responses/native';
import { NativeResponsesStream } from '../../dialects/responses/native-stream';
import { storeResponse } from './store';
import { recordInConversation } from './conversation';
import { openCompactions } from './compact';
import { endFailedStream } from './failed';
import { compactIfDue, type CompactionAsk } from './server-compaction';

type Tools = NonNullable<ResponsesRequest['tools']>;

/**
 * A responses request with a hosted `web_search*` tool: run on the gateway's search rails (never
 * sent upstream), answered with `web_search_call` items and cited messages, JSON or streamed.
 */
export async function answerNative(ctx: AppContext, req: Request, res: Response, body: ResponsesRequest, resolved: ResolvedModel, history: CanonicalMessage[], set: NativeToolSet, rest: Tools, compaction?: CompactionAsk): Promise<void> {
  const rails = nativeRails(ctx, req, set);
  const abort = new AbortController();
  const onClose = () => !res.writableFinished && abort.abort();
  res.on('close', onClose);
  let unfolded: Awaited<ReturnType<typeof unfoldSearchCalls>>;
  try {
    unfolded = await unfoldSearchCalls(body, rest, set, rails, abort.signal);
  } finally {
    res.off('close', onClose);
  }
  const { canonical, turn } = responsesToCanonical(openCompactions(unfolded.request, req.auth!.orgId), history);
  forModel(canonical, resolved.model.config);
  // server-side compaction before the loop (server-compaction.ts): its pass is the request's first job
  const compacted = compaction ? await compactIfDue(ctx, req, res, resolved, canonical, compaction) : undefined;
  const asked = compacted ? compacted.context : [...history, ...turn];
  const frame: ResponseFrame = { id: newId('resp'), createdAt: Math.floor(Date.now() / 1000), publicModel: resolved.requestedId, req: body };
  const store = body.store !== false;
  const loop = { resolved, canonical, tools: set, rails, jobsBefore: compacted ? 1 : 0 };
  if (body.stream !== true) {
    const t = await runNativeLoop(ctx, req, res, loop);
    const output = transcriptOutput(t, rails.orgId, body);
    if (compacted) output.unshift(compacted.item as OutputItem);
    const response = responseObject(frame, output, t.finish ?? 'stop', compacted ? addUsage(compacted.usage, t.usage) : t.usage);
    if (store) await storeResponse(req, response, [...asked, ...t.added], body);
    await recordInConversation(req, body, response);
    res.json(response);
    return;
  }
  const sse = new SseWriter(res);
  const w = new NativeResponsesStream(frame, rails.orgId);
  const send = (events: ReturnType<NativeResponsesStream['push']>) => {
    for (const ev of events) sse.send(JSON.stringify(ev), ev.type);
  };
  try {
    if (compacted) send(w.before(compacted.item as OutputItem, compacted.usage));
    const t = await runNativeLoop(ctx, req, res, { ...loop, onStep: (s) => send(w.push(s)), onText: (d) => send(w.text(d)) });
    const { events, response } = w.end(t);
    if (store) await storeResponse(req, response, [...asked, ...t.added], body);
    await recordInConversation(req, body, response);
    send(events);
    sse.end();
  } catch (err) {
    if (err instanceof ClientGone) return;
    if (!sse.isStarted) throw err;
    await endFailedStream(req, sse, w, err, store ? { conversation: [...history, ...turn], input: body.input } : undefined);
  }
}
