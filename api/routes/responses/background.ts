import type { Request, Response } from 'express';
import { Op, Sequelize } from 'sequelize';
import type { AppContext } from '../../context';
import { StoredResponse } from '../../../shared/db/models';
import { ApiError } from '../../../shared/errors/ApiError';
import { errors } from '../../../shared/errors/codes';
import { logger } from '../../../shared/logger';
import { keys } from '../../../shared/redis/keys';
import { chatQueue } from '../../../shared/queues/names';
import { laneFor } from '../../../shared/lanes/policy';
import { storableCopy } from '../../../shared/http/json-checks';
import { addUsageToRow, logFailedCall, logState, logSucceededRun } from '../../middleware/request-log';
import { dispatchChat, type resolveChatModel } from '../../dispatch/chat';
import { addUsage, type CanonicalChunk, type CanonicalCompletion, type CanonicalMessage } from '../../dialects/canonical';
import type { ResponsesRequest } from '../../dialects/responses/request';
import { canonicalToResponse, failedResponse, responseObject, type OutputItem, type ResponseFrame } from '../../dialects/responses/response';
import { type Prepare } from './server-compaction';
import { afterCompaction } from '../../dispatch/summarise';
import { merged } from '../../../shared/merged';
import { findStored, storeResponse } from './store';
import { shownResponse } from './include';
import { recordInConversation } from './conversation';
import { BACKGROUND_LEASE_MS } from '../../../shared/responses/retention';
import { BackgroundEventLog } from './background-stream';
import { cancelLeasedJob, listenForCancels, publishCancel } from './background-cancel';
import { forgetResume, keepForResume, noteResumedJob } from './background-resume';
import { SseWriter } from '../../sse';
import { ResponsesStreamTranslator } from '../../dialects/responses/stream';
import type { ResponsesEventWriter } from '../../dialects/responses/event-writer';
import type { ResponsesEvent } from '../../dialects/responses/event-writer';
import { answeredFields } from '../../dialects/responses/client-view';
import { identityNow, keptIdentity } from '../../kept-identity';

type Resolved = Awaited<ReturnType<typeof resolveChatModel>>;

/** A background response's statuses before it ends; `completed`, `incomplete`, `failed` and `cancelled` end it. */
const RUNNING = ['queued', 'in_progress'];
/** A background response running on this pod: its abort, and its lease's value (`<queue> <job id>`). */
interface Run {
  abort: AbortController;
  lease: string;
  /** Its request is kept (background-resume.ts): a stopping pod hands it to another instead of failing it. */
  resumable: boolean;
}

/** The reason a stopping pod aborts a resumable run with: it is neither failed nor logged, and another pod resumes it. */
class HandOff extends Error {}
/**
 * Each pod's background responses still running (by its context: one process may hold several pods,
 * as the tests do): a cancel made on the same pod, or published by another (background-cancel.ts),
 * aborts the run at once.
 */
const byPod = new WeakMap<AppContext, Map<string, Run>>();
function runningOn(ctx: AppContext): Map<string, Run> {
  let m = byPod.get(ctx);
  if (!m) byPod.set(ctx, (m = new Map()));
  return m;
}

/**
 * Renews the pod's lease on each background response it runs (its job key, which a cancel from
 * another pod also reads): while the key lives the clock's sweep leaves the response running
 * (shared/responses/retention.ts); a lost pod's leases lapse within BACKGROUND_LEASE_MS. A renewal
 * writes the key whole, so a lease a Redis restart lost is back within a third of its life.
 */
export async function renewLeases(ctx: AppContext): Promise<void> {
  await Promise.all([...runningOn(ctx)].map(([id, run]) => ctx.redis.set(keys.backgroundJob(id), run.lease, 'PX', BACKGROUND_LEASE_MS)));
}

const renewing = new WeakMap<AppContext, NodeJS.Timeout>();
/** Renews the pod's leases every third of their life while it runs background responses. */
function keepLeases(ctx: AppContext): void {
  if (renewing.has(ctx)) return;
  const timer = setInterval(() => {
    if (!runningOn(ctx).size) {
      clearInterval(timer);
      renewing.delete(ctx);
      return;
    }
    renewLeases(ctx).catch((err: unknown) => logger.warn({ err }, 'background leases not renewed'));
  }, BACKGROUND_LEASE_MS / 3);
  timer.unref();
  renewing.set(ctx, timer);
}

/**
 * The request's refusals for `background: true`, before anything is stored or run. A batch line is
 * refused: the runner bills a line's usage with its answer (docs/batches.md), and a background
 * response answers before its work runs, so that work would run after the line was recorded and
 * never be billed, nor count against a budget.
 */
export function checkBackground(req: Request, body: ResponsesRequest): void {
  if (body.store === false) throw new ApiError(400, 'invalid_request', "Background mode requires 'store' to be true (the response is kept to be polled).", { param: 'background' });
  if (req.batchLine) throw new ApiError(400, 'invalid_request', 'Background mode is not available in a batch line: the batch already runs it in the background.', { param: 'background' });
}

/** The error a run ends with when it learns it was cancelled from another pod. */
export const cancelledRun = () => new ApiError(499, 'cancelled', 'The background response was cancelled.');

/** How long a background response waits for a lane slot (its org's lanes full), retrying every LANE_RETRY_MS. */
const LANE_WAIT_MS = 10 * 60_000;
const LANE_RETRY_MS = 1000;

/**
 * Runs `attempt` until a lane admits it: a background response is work the caller waits for by polling,
 * so its org's lanes being full (429 CONCURRENT_REQUEST_LIMIT_EXCEEDED, refused before anything was
 * sent) makes it wait, up to LANE_WAIT_MS, instead of failing it.
 */
export async function runWhenAdmitted<T>(attempt: () => Promise<T>, signal: AbortSignal, stillWanted: () => Promise<boolean>): Promise<T> {
  const until = Date.now() + LANE_WAIT_MS;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== 'CONCURRENT_REQUEST_LIMIT_EXCEEDED' || Date.now() > until || signal.aborted) throw err;
      await new Promise((r) => setTimeout(r, LANE_RETRY_MS));
      if (signal.aborted) throw signal.reason;
      // cancelled (or deleted) from another pod while it waited: no job of it exists to cancel there
      if (!(await stillWanted())) throw cancelledRun();
    }
  }
}

/** Whether a background response is still queued or in progress (not cancelled, not deleted). */
async function stillRunning(id: string, orgId: string): Promise<boolean> {
  const row = await StoredResponse.findOne({ where: { id, orgId }, attributes: ['response'] });
  return !!row && RUNNING.includes(String(row.response.status));
}

/** Updates a background response's row while it has not ended (a cancel or a delete wins over a late answer). */
async function settle(id: string, orgId: string, response: Record<string, unknown>, conversation?: CanonicalMessage[]): Promise<void> {
  const values: Partial<{ response: Record<string, unknown>; conversation: unknown[] }> = { response: storableCopy(response) };
  if (conversation) values.conversation = storableCopy(conversation);
  await StoredResponse.update(values, { where: { id, orgId, [Op.and]: [Sequelize.where(Sequelize.literal("response->>'status'"), { [Op.in]: RUNNING })] } });
}

/** What a background run gives its work: its cancel, whether a client's leaving stops it (never), a streamed run's events, and whether it is still wanted. */
export interface BackgroundRun {
  signal: AbortSignal;
  detached: boolean;
  /** A streamed run's events: kept for followers, and sent to the request's client while it is there. */
  emit: (evs: ResponsesEvent[]) => void;
  /** Still queued or in progress (not cancelled from another pod, not deleted). */
  wanted: () => Promise<boolean>;
}

/** What a background response runs: the answer (a chat request's, or the hosted search loop's, native.ts), streamed through `writer` when asked. */
export interface BackgroundWork {
  /** The stream's writer (a streamed run only): its queued and failed events are the run's. */
  writer?: ResponsesEventWriter;
  /** Runs the answer; returns the final Response, the conversation a follow-up continues, and a streamed run's closing events. */
  answer(run: BackgroundRun): Promise<{ response: Record<string, unknown>; conversation: CanonicalMessage[]; closing?: ResponsesEvent[] }>;
}

/**
 * A chat request's background work: server-side compaction and truncation (`prepare`, router.ts),
 * then the answer, each waiting for a lane (runWhenAdmitted).
 */
export function chatWork(ctx: AppContext, req: Request, res: Response, resolved: Resolved, canonical: Record<string, unknown>, asked: CanonicalMessage[], frame: ResponseFrame, stream: boolean, prepare: Prepare): BackgroundWork {
  const t = stream ? new ResponsesStreamTranslator(frame) : undefined;
  return {
    writer: t,
    answer: async ({ signal, detached, emit, wanted }) => {
      // server-side compaction and truncation, in the run: its summary pass waits for a lane as the answer does
      const compacted = await runWhenAdmitted(() => prepare({ signal, detached }), signal, wanted);
      // what the answer continues, and a follow-up after it: the conversation, or what replaced it when it was compacted
      const continued = compacted ? compacted.context : asked;
      if (t && compacted) emit(t.before(compacted.item as OutputItem, compacted.usage));
      const job = { resolved, operation: 'chat' as const, body: canonical, stream, includeUsage: true, passthrough: false, signal, detached, onChunk: t ? (d: string) => emit(t.push(JSON.parse(d) as CanonicalChunk)) : undefined };
      const dispatch = () => dispatchChat(ctx, req, res, compacted ? merged(job, afterCompaction(req)) : job);
      const result = await runWhenAdmitted(dispatch, signal, wanted);
      // after a compaction both passes are parts of the request (no job carries its row): the run writes it
      if (compacted) {
        addUsageToRow(res, t ? t.answerUsage : (result as CanonicalCompletion).usage);
        logSucceededRun(ctx, req, res);
      }
      if (t) {
        const closing = t.end();
        return { response: t.final!.response, conversation: [...continued, t.final!.assistant], closing };
      }
      const answer = result as CanonicalCompletion;
      const { response, assistant } = canonicalToResponse(compacted ? Object.assign({}, answer, { usage: addUsage(compacted.usage, answer.usage) }) : answer, frame);
      if (compacted) (response.output as unknown[]).unshift(compacted.item);
      return { response, conversation: [...continued, assistant] };
    },
  };
}

/**
 * `POST /v1/responses` with `background: true` (OpenAI's background mode): the Response is stored
 * `queued`, and the request then runs on this pod as a synchronous one would (its lane, limits, usage
 * and request log) whether or not a client waits for it. Its row becomes `in_progress`, then
 * `completed` (or `incomplete`) with the output, or `failed` with the error; GET polls it, POST
 * .../cancel ends it `cancelled` from any pod. Without `stream` the queued Response is answered at
 * once and the run starts when that answer is out; with `stream` the answer is the run's events
 * (response.created and response.queued first), kept for `GET ?stream=true` (background-stream.ts),
 * and the client leaving stops nothing. `work` is what runs (chatWork, or native.ts's hosted search loop).
 */
export async function startBackground(ctx: AppContext, req: Request, res: Response, body: ResponsesRequest, resolved: Resolved, asked: CanonicalMessage[], frame: ResponseFrame, work: BackgroundWork): Promise<void> {
  const queued = responseObject(frame, [], 'in_progress', null);
  queued.status = 'queued';
  const orgId = req.auth!.orgId;
  const kept = keptIdentity(req.auth!);
  const lane = laneFor(req.auth!.org, resolved.background);
  const stream = body.stream === true;
  const t = work.writer;
  // its events are kept whole: each client is shown them as its own `include` asks (this request's below, a follower's background-stream.ts)
  t?.keepWhole();
  const events = t ? new BackgroundEventLog(ctx.redis, frame.id) : undefined;
  const lease = `${chatQueue(lane)} ${req.id}`;
  await ctx.redis.set(keys.backgroundJob(frame.id), lease, 'PX', BACKGROUND_LEASE_MS);
  const opening = t ? t.queued() : [];
  if (events) await events.open(opening);
  // listening for cancels from other pods, and the run registered, before the response can be found to cancel
  await listenForCancels(ctx, (id) => runningOn(ctx).get(id)?.abort.abort(cancelledRun()));
  const abort = new AbortController();
  const running = runningOn(ctx);
  const resumed = req.resumedResponse;
  const runState: Run = { abort, lease, resumable: !!resumed };
  running.set(frame.id, runState);
  try {
    // resumed after its pod was lost (background-resume.ts): its row is there, and may have ended meanwhile (a cancel)
    if (resumed) {
      if (!(await stillRunning(frame.id, orgId))) throw new ApiError(409, 'invalid_request', 'The background response is no longer running.');
      await noteResumedJob(ctx, frame.id, lease);
    } else {
      await storeResponse(req, queued, asked, body);
      runState.resumable = await keepForResume(ctx, req, frame, lease, stream, logState(res)?.receivedAt ?? Date.now());
    }
  } catch (err) {
    running.delete(frame.id);
    throw err;
  }
  keepLeases(ctx);
  // The request's Activity row is the run's: its usage carries it when it completes (with its tokens),
  // else it is written with the failure (below); the pod writes none for the queued answer.
  const state = logState(res);
  if (state) state.carried = true;
  const sse = t ? new SseWriter(res) : undefined;
  /** Events to this request's client while it is there, as its `include` asks (client-view.ts). */
  const toClient = (evs: ResponsesEvent[]) => {
    for (const ev of evs) if (!res.destroyed) sse!.send(JSON.stringify(answeredFields(ev, body)), ev.type);
  };
  /** A streamed run's events: kept for followers, and sent to this request's client. */
  const emit = (evs: ResponsesEvent[]) => {
    for (const ev of evs) events!.add(ev);
    toClient(evs);
  };
  const run = async () => {
    try {
      await settle(frame.id, orgId, Object.assign({}, queued, { status: 'in_progress' }));
      // its key checked again before each lane retry and each later turn: revoked, expired, rotated out or
      // its member gone meanwhile, the run stops, as a resumed one or a batch line does (api/kept-identity.ts);
      // otherwise it goes on under the key's controls of now (a budget or rate its owner set meanwhile)
      const wanted = async () => {
        const now = await identityNow(ctx, kept, 'made this background response');
        if (now instanceof ApiError) throw now;
        req.auth!.controls = now.controls;
        return stillRunning(frame.id, orgId);
      };
      const { response, conversation, closing } = await work.answer({ signal: abort.signal, detached: stream, emit, wanted });
      await settle(frame.id, orgId, response, conversation);
      await recordInConversation(req, body, response);
      if (closing) emit(closing);
    } catch (err) {
      // aborted (a cancel, a shutdown): its reason, whatever the aborted step threw
      const reason: unknown = abort.signal.aborted ? abort.signal.reason : err;
      if (reason instanceof HandOff) return; // another pod resumes it (its lease is deleted below)
      const e = reason instanceof ApiError ? reason : err instanceof ApiError ? err : new ApiError(502, 'upstream_error', 'The background response failed.');
      logFailedCall(ctx, req, req.id, resolved.requestedId, { status: e.status, code: e.code });
      // a streamed run that was cancelled (its row no longer running) ends without a last event (the API has
      // none for it); any other failure ends with response.failed
      const cancelled = e.code === 'cancelled' || !(await stillRunning(frame.id, orgId).catch(() => true));
      const ended = t && !cancelled ? t.failed(e) : undefined;
      const failed = ended?.response ?? failedResponse(frame, [], e);
      await settle(frame.id, orgId, failed).catch((x) => logger.warn({ err: x, responseId: frame.id }, 'background response not settled'));
      if (ended) emit(ended.events);
    } finally {
      running.delete(frame.id);
      void ctx.redis.del(keys.backgroundJob(frame.id)).catch(() => undefined);
      if (runState.resumable && !(abort.signal.reason instanceof HandOff)) void forgetResume(ctx, frame.id).catch(() => undefined);
      if (events) await events.end();
      sse?.end();
    }
  };
  if (t) {
    toClient(opening); // already kept (events.open)
    return run();
  }
  // The run starts once the answer is out: the request's response is finished, so no disconnect cancels
  // it. A client gone before the answer was written (it never learnt the id) cancels it at once.
  res.once('close', () => void run());
  res.json(queued);
}

/**
 * `POST /v1/responses/{id}/cancel`: a background response still queued or running ends `cancelled`
 * (its upstream request aborted, wherever it runs) and is answered; cancelling one already cancelled
 * answers it again. A response that was not made in the background, or has already ended otherwise,
 * is refused (400).
 */
export function cancelHandler(ctx: AppContext) {
  return async (req: Request, res: Response) => {
    const id = String(req.params.id);
    const row = await findStored(req, id);
    const r = row.response;
    if (r.background !== true) throw new ApiError(400, 'invalid_request', 'Only responses created with background=true can be cancelled.', { param: 'response_id' });
    // as GET shows it without `include` (include.ts)
    if (r.status === 'cancelled') return void res.json(shownResponse(r, []));
    if (!RUNNING.includes(String(r.status))) throw new ApiError(400, 'invalid_request', `Cannot cancel a response with status '${String(r.status)}'.`, { param: 'response_id' });
    const cancelled = Object.assign({}, r, { status: 'cancelled', usage: null, completed_at: null });
    await settle(id, req.auth!.orgId, cancelled);
    await forgetResume(ctx, id);
    const local = runningOn(ctx).get(id);
    if (local) local.abort.abort(cancelledRun());
    else {
      // the pod that runs it aborts its run (background-cancel.ts); the job named by its lease is
      // cancelled too, for a pod of an earlier version that does not listen
      await publishCancel(ctx, id);
      await cancelLeasedJob(ctx, await ctx.redis.get(keys.backgroundJob(id)));
    }
    res.json(shownResponse((await findStored(req, id)).response, []));
  };
}


/**
 * A web pod's shutdown (api/server.ts): waits up to `ms` for this pod's background responses to end,
 * then aborts the rest. A resumable one (its request kept, background-resume.ts) is handed off: its
 * lease is deleted and another pod resumes it at its next look; the others end `failed` (503, send it
 * again) rather than waiting for the clock's sweep of lapsed leases.
 */
export async function drainBackground(ctx: AppContext, ms: number): Promise<void> {
  const running = runningOn(ctx);
  const until = Date.now() + ms;
  while (running.size && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  for (const { abort, resumable } of running.values()) {
    abort.abort(resumable ? new HandOff('handed to another pod') : new ApiError(503, 'service_unavailable', 'The gateway stopped before this background response ended; send it again.'));
  }
  while (running.size) await new Promise((r) => setTimeout(r, 20));
}
