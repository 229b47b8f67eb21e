import type { Request, Response } from 'express';
import type { AppContext } from '../../context';
import type { ResolvedModel } from '../../../shared/catalog/catalog';
import type { CanonicalMessage, CanonicalRequest } from '../../dialects/canonical';
import type { NativeToolSet } from '../../dispatch/native-search/tools';
import { nativeRails, runNativeLoop, type NativeRails, type NativeTranscript } from '../../dispatch/native-search/loop';
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
import { compactIfDue, type CompactionAsk, type ServerCompaction } from './server-compaction';
import { cancelledRun, runWhenAdmitted, startBackground, type BackgroundWork } from './background';
import { logSucceededRun } from '../../middleware/request-log';

type Tools = NonNullable<ResponsesRequest['tools']>;

/**
 * A responses request with a hosted `web_search*` tool: run on the gateway's search rails (never
 * sent upstream), answered with `web_search_call` items and cited messages, JSON or streamed, or in
 * the background (nativeWork).
 */
export async function answerNative(ctx: AppContext, req: Request, res: Response, body: ResponsesRequest, resolved: ResolvedModel, history: CanonicalMessage[], set: NativeToolSet, rest: Tools, compaction?: CompactionAsk): Promise<void> {
  const rails = nativeRails(ctx, req, set);
  const frame: ResponseFrame = { id: newId('resp'), createdAt: Math.floor(Date.now() / 1000), publicModel: resolved.requestedId, req: body };
  const asking: Asking = { ctx, req, res, body, resolved, history, set, rest, rails, compaction };
  if (body.background === true) {
    // a compaction item that is not this org's is refused now, before anything is stored (the run unfolds the rest)
    openCompactions(body, req.auth!.orgId);
    return startBackground(ctx, req, res, body, resolved, history, frame, nativeWork(asking, frame));
  }
  const abort = new AbortController();
  const onClose = () => !res.writableFinished && abort.abort();
  res.on('close', onClose);
  let prepared: Prepared;
  try {
    prepared = await prepareNative(asking, { signal: abort.signal });
  } finally {
    res.off('close', onClose);
  }
  const { canonical, asked, compacted } = prepared;
  const store = body.store !== false;
  const loop = { resolved, canonical, tools: set, rails, jobsBefore: compacted ? 1 : 0 };
  if (body.stream !== true) {
    const t = await runNativeLoop(ctx, req, res, loop);
    const response = nativeResponse(t, prepared, frame, body, rails.orgId);
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
    await endFailedStream(req, sse, w, err, store ? { conversation: prepared.conversation, input: body.input } : undefined);
  }
}

/** What a hosted search request asks, as answerNative took it. */
interface Asking {
  ctx: AppContext;
  req: Request;
  res: Response;
  body: ResponsesRequest;
  resolved: ResolvedModel;
  history: CanonicalMessage[];
  set: NativeToolSet;
  rest: Tools;
  rails: NativeRails;
  compaction?: CompactionAsk;
}

/** The request ready for the loop: its canonical request, the conversation it continues (`asked`: compacted or not), and its compaction. */
interface Prepared {
  canonical: CanonicalRequest;
  /** The conversation before the answer, as sent (history and this turn). */
  conversation: CanonicalMessage[];
  asked: CanonicalMessage[];
  compacted: ServerCompaction | undefined;
}

/**
 * The echoed search calls unfolded (a result without its encrypted content is searched again), the
 * canonical request, and server-side compaction before the loop (server-compaction.ts: its pass is the
 * request's first job).
 */
async function prepareNative(a: Asking, job: { signal: AbortSignal; detached?: boolean }): Promise<Prepared> {
  const unfolded = await unfoldSearchCalls(a.body, a.rest, a.set, a.rails, job.signal);
  const { canonical, turn } = responsesToCanonical(openCompactions(unfolded.request, a.req.auth!.orgId), a.history);
  forModel(canonical, a.resolved.model.config);
  const compacted = a.compaction ? await compactIfDue(a.ctx, a.req, a.res, a.resolved, canonical, a.compaction, job) : undefined;
  const conversation = [...a.history, ...turn];
  return { canonical, conversation, asked: compacted ? compacted.context : conversation, compacted };
}

/** The Response of a finished loop (JSON): the compaction item first when there was one, its pass in the usage. */
function nativeResponse(t: NativeTranscript, p: Prepared, frame: ResponseFrame, body: ResponsesRequest, orgId: string): Record<string, unknown> {
  const output = transcriptOutput(t, orgId, body);
  if (p.compacted) output.unshift(p.compacted.item as OutputItem);
  return responseObject(frame, output, t.finish ?? 'stop', p.compacted ? addUsage(p.compacted.usage, t.usage) : t.usage);
}

/**
 * A hosted search request in the background (background.ts): the loop runs in the background run, each
 * turn waiting for a lane as a background chat request does, stopped by a cancel (on this pod at once,
 * from another before its next turn); streamed, its events are the run's. Its turns are parts of the
 * request (no job carries its row): the run writes the one row.
 */
function nativeWork(a: Asking, frame: ResponseFrame): BackgroundWork {
  const w = a.body.stream === true ? new NativeResponsesStream(frame, a.rails.orgId) : undefined;
  return {
    writer: w,
    answer: async ({ signal, detached, emit, wanted }) => {
      const p = await prepareNative(a, { signal, detached });
      if (w && p.compacted) emit(w.before(p.compacted.item as OutputItem, p.compacted.usage));
      const t = await runNativeLoop(a.ctx, a.req, a.res, {
        resolved: a.resolved,
        canonical: p.canonical,
        tools: a.set,
        rails: a.rails,
        jobsBefore: p.compacted ? 1 : 0,
        signal,
        detached,
        admit: (dispatch) => runWhenAdmitted(dispatch, signal, wanted),
        beforeTurn: async () => {
          if (!(await wanted())) throw cancelledRun();
        },
        onStep: w ? (s) => emit(w.push(s)) : undefined,
        onText: w ? (d) => emit(w.text(d)) : undefined,
      });
      logSucceededRun(a.ctx, a.req, a.res);
      if (w) {
        const { events, response } = w.end(t);
        return { response, conversation: [...p.asked, ...t.added], closing: events };
      }
      return { response: nativeResponse(t, p, frame, a.body, a.rails.orgId), conversation: [...p.asked, ...t.added] };
    },
  };
}
