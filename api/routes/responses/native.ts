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
import { responseObject, type OutputItem, type ResponseFrame } from '../../dialects/responses/response';
import { answeredResponse } from '../../dialects/responses/client-view';
import { transcriptOutput, unfoldSearchCalls, withSearchFunctions } from '../../dialects/responses/native';
import { NativeResponsesStream } from '../../dialects/responses/native-stream';
import { storeResponse } from './store';
import { recordInConversation } from './conversation';
import { openCompactions } from './compact';
import { refuseCallWithoutOutput, refuseOutputWithoutCall } from '../../dialects/responses/call-pairing';
import { endFailedStream } from './failed';
import { compactIfDue, type CompactionAsk, type ServerCompaction } from './server-compaction';
import { responseFrame } from './background-resume';
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
  const frame: ResponseFrame = responseFrame(req, resolved.requestedId, body);
  const asking: Asking = { ctx, req, res, body, resolved, history, set, rest, rails, compaction };
  const abort = new AbortController();
  const onClose = () => !res.writableFinished && abort.abort();
  res.on('close', onClose);
  let unfolded: Unfolded;
  let prepared: Prepared | undefined;
  try {
    // in the background too: an input it refuses is a 400 before anything is stored, and the queued response holds its turn
    unfolded = await unfoldNative(asking, abort.signal);
    if (body.background !== true) prepared = await prepareNative(asking, unfolded, { signal: abort.signal });
  } finally {
    res.off('close', onClose);
  }
  if (!prepared) {
    if (abort.signal.aborted) throw new ClientGone(); // it left while its searches re-ran: it never learns the id
    return startBackground(ctx, req, res, body, resolved, unfolded.conversation, frame, nativeWork(asking, unfolded, frame));
  }
  const { canonical, asked, compacted } = prepared;
  const store = body.store !== false;
  const loop = { resolved, canonical, tools: set, rails, jobsBefore: compacted ? 1 : 0, maxCalls: body.max_tool_calls ?? undefined };
  if (body.stream !== true) {
    const t = await runNativeLoop(ctx, req, res, loop);
    const response = nativeResponse(t, prepared, frame, body, rails.orgId);
    if (store) await storeResponse(req, response, [...asked, ...t.added], body);
    await recordInConversation(req, body, response);
    // stored whole; answered as the request's `include` asks (client-view.ts)
    res.json(answeredResponse(response, body));
    return;
  }
  const sse = new SseWriter(res);
  const w = new NativeResponsesStream(frame, rails.orgId);
  const send = (events: ReturnType<NativeResponsesStream['push']>) => {
    for (const ev of events) sse.send(JSON.stringify(ev), ev.type);
  };
  try {
    if (compacted) send(w.before(compacted.item as OutputItem, compacted.usage));
    const t = await runNativeLoop(ctx, req, res, { ...loop, onStep: (s) => send(w.push(s)), onText: (d) => send(w.text(d)), onReasoning: (d) => send(w.reasoning(d)), onThinking: (b) => send(w.thinking(b)) });
    const { events, response } = w.end(t);
    if (store) await storeResponse(req, response, [...asked, ...t.added], body);
    await recordInConversation(req, body, response);
    send(events);
    sse.end();
  } catch (err) {
    if (err instanceof ClientGone) return;
    if (!sse.isStarted) throw err;
    await endFailedStream(req, sse, w, err, store ? { conversation: prepared.conversation, request: body } : undefined);
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

/** The request as the loop runs it: its canonical request, and the conversation before the answer, as sent (history and this turn). */
interface Unfolded {
  canonical: CanonicalRequest;
  conversation: CanonicalMessage[];
}

/** The request ready for the loop: the conversation it continues (`asked`: compacted or not), and its compaction. */
interface Prepared extends Unfolded {
  asked: CanonicalMessage[];
  compacted: ServerCompaction | undefined;
}

/**
 * The input checked, then the echoed search calls unfolded (a result without its encrypted content is
 * searched again, billed) and the canonical request made; before the response is made, in the
 * background too. Compaction items are opened first (one not sealed for the org is 400 naming the
 * client's item; the search calls a compaction stands for are not re-run), and the rest of the input
 * is converted once without its search calls, so what the conversion refuses (an item type, role or
 * part it does not take, the tool choice) is refused before any search is re-run.
 */
async function unfoldNative(a: Asking, signal: AbortSignal): Promise<Unfolded> {
  const opened = openCompactions(a.body, a.rails.orgId);
  const input = Array.isArray(opened.input) ? opened.input.filter((i) => i.type !== 'web_search_call') : opened.input;
  const unsearched = responsesToCanonical(withSearchFunctions({ ...opened, input }, a.rest, a.set), a.history);
  // a tool output answering no call, or a call left without its output: refused as on the plain path (call-pairing.ts), before any search is re-run
  refuseOutputWithoutCall(unsearched.canonical.messages, a.body.input);
  refuseCallWithoutOutput(unsearched.canonical.messages, a.body);
  const { canonical, turn } = responsesToCanonical(await unfoldSearchCalls(opened, a.rest, a.set, a.rails, signal), a.history);
  forModel(canonical, a.resolved.model.config);
  return { canonical, conversation: [...a.history, ...turn] };
}

/** Server-side compaction before the loop (server-compaction.ts: its pass is the request's first job). */
async function prepareNative(a: Asking, u: Unfolded, job: { signal: AbortSignal; detached?: boolean }): Promise<Prepared> {
  const compacted = a.compaction ? await compactIfDue(a.ctx, a.req, a.res, a.resolved, u.canonical, a.compaction, job) : undefined;
  return { ...u, asked: compacted ? compacted.context : u.conversation, compacted };
}

/** The Response of a finished loop (JSON): the compaction item first when there was one, its pass in the usage. */
function nativeResponse(t: NativeTranscript, p: Prepared, frame: ResponseFrame, body: ResponsesRequest, orgId: string): Record<string, unknown> {
  const output = transcriptOutput(t, orgId, body);
  if (p.compacted) output.unshift(p.compacted.item as OutputItem);
  return responseObject(frame, output, t.finish ?? 'stop', p.compacted ? addUsage(p.compacted.usage, t.usage) : t.usage);
}

/**
 * A hosted search request in the background (background.ts), its input already unfolded: compaction
 * and the loop run in the background run, each turn waiting for a lane as a background chat request
 * does, stopped by a cancel from any pod (its turn or search in flight aborted; background.ts); streamed,
 * its events are the run's. Its turns are parts of the request (no job carries its row): the run writes
 * the one row.
 */
function nativeWork(a: Asking, u: Unfolded, frame: ResponseFrame): BackgroundWork {
  const w = a.body.stream === true ? new NativeResponsesStream(frame, a.rails.orgId) : undefined;
  return {
    writer: w,
    answer: async ({ signal, detached, emit, wanted }) => {
      const p = await prepareNative(a, u, { signal, detached });
      if (w && p.compacted) emit(w.before(p.compacted.item as OutputItem, p.compacted.usage));
      const t = await runNativeLoop(a.ctx, a.req, a.res, {
        resolved: a.resolved,
        canonical: p.canonical,
        tools: a.set,
        rails: a.rails,
        jobsBefore: p.compacted ? 1 : 0,
        maxCalls: a.body.max_tool_calls ?? undefined,
        signal,
        detached,
        admit: (dispatch) => runWhenAdmitted(dispatch, signal, wanted),
        beforeTurn: async () => {
          if (!(await wanted())) throw cancelledRun();
        },
        onStep: w ? (s) => emit(w.push(s)) : undefined,
        onText: w ? (d) => emit(w.text(d)) : undefined,
        onReasoning: w ? (d) => emit(w.reasoning(d)) : undefined,
        onThinking: w ? (b) => emit(w.thinking(b)) : undefined,
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
