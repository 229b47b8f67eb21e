import type { Request } from 'express';
import { request } from 'undici';
import type { AppContext } from '../../context';
import { TicketApp } from '../../ticket-app';
import { newId, type ResponseFrame } from '../../dialects/responses/response';
import type { ResponsesRequest } from '../../dialects/responses/request';
import { identityNow, keptIdentity, type KeptIdentity } from '../../kept-identity';
import { merged } from '../../../shared/merged';
import { decrypt, encrypt } from '../../../shared/crypto';
import { keys } from '../../../shared/redis/keys';
import { logger } from '../../../shared/logger';
import { cancelLeasedJob } from './background-cancel';
import { dialectOf, logFailure } from '../../middleware/request-log';
import { ApiError } from '../../../shared/errors/ApiError';
import { BACKGROUND_LEASE_MS, LOST_RUN, RESUME_MAX, failBackground, runningBackground } from '../../../shared/responses/retention';

/** A resume that failed for want of an answer from the ticket app. */
const NOT_RESUMED = 'The background response could not be resumed; send it again.';

/** How long a background response's request is kept to resume it (a run that outlives it is failed by the clock if its pod is lost). */
const RESUME_KEEP_MS = 24 * 3_600_000;

/** What a pod needs to resume a background response another pod was running: the caller's request and identity. */
interface ResumeRecord extends KeptIdentity {
  requestId: string;
  /** When the caller's request arrived (ms): its request log row's key. */
  receivedAt: number;
  /** The response's `created_at` (seconds). */
  createdAt: number;
  /** The request body as the caller sent it (JSON). */
  body: string;
}

/**
 * Keeps what resumes a background response on another pod if this one is lost (sealed with the
 * gateway's key, like every secret it keeps; deleted when the run ends), and the job running it (`j`,
 * the lease's value: cancelled before it is resumed; runJob names it). Only a polled run made with a
 * gateway key is kept: a streamed one's events were already sent to its followers (a second run would
 * send other ones), and a caller's own upstream key is never kept. Returns whether it was kept.
 */
export async function keepForResume(ctx: AppContext, req: Request, frame: { id: string; createdAt: number }, job: string, streamed: boolean, receivedAt: number): Promise<boolean> {
  const a = req.auth!;
  if (streamed || a.callerUpstreamKey || req.batchLine) return false;
  const record: ResumeRecord = merged(keptIdentity(a), { requestId: req.id, receivedAt, createdAt: frame.createdAt, body: JSON.stringify(req.body) });
  const k = keys.backgroundResume(frame.id);
  await ctx.redis.multi().hset(k, 's', encrypt(JSON.stringify(record)), 'n', '0', 'j', job).pexpire(k, RESUME_KEEP_MS).exec();
  return true;
}

/** A resumed run's job (its lease's value), for the next resume's cancel. */
export async function noteResumedJob(ctx: AppContext, id: string, job: string): Promise<void> {
  await ctx.redis.hset(keys.backgroundResume(id), 'j', job);
}

/** Forgets a background response's kept request (its run ended, or it was cancelled). */
export async function forgetResume(ctx: AppContext, id: string): Promise<void> {
  await ctx.redis.del(keys.backgroundResume(id), keys.backgroundLapsed(id));
}

/** Each pod's ticket app for resumed requests, started at its first resume. */
const apps = new WeakMap<AppContext, Promise<TicketApp>>();
function ticketApp(ctx: AppContext): Promise<TicketApp> {
  let app = apps.get(ctx);
  if (!app) {
    const made = new TicketApp(ctx);
    app = made.start().then(() => made);
    apps.set(ctx, app);
  }
  return app;
}

/** Closes the pod's ticket app, if it made one. */
export async function closeResumeApp(ctx: AppContext): Promise<void> {
  const app = apps.get(ctx);
  apps.delete(ctx);
  await (await app)?.close();
}

/**
 * The Activity row of a resumed request refused before it was sent again (its key no longer works):
 * the kept identity's (its key's id while the key exists), at the caller's arrival, as the ticket
 * app's row of a request refused there is; no job ran, nothing is billed.
 */
async function logRefused(ctx: AppContext, record: ResumeRecord, requestId: string, e: ApiError): Promise<void> {
  const rec = await ctx.directory.keyByHash(record.keyHash);
  const key = rec?.orgId === record.orgId ? rec : undefined;
  const model = (JSON.parse(record.body) as { model?: unknown }).model;
  const route = '/v1/responses';
  const base = { receivedAt: record.receivedAt, route, dialect: dialectOf(route), userId: key?.userId ?? null };
  logFailure(ctx, base, { requestId, orgId: record.orgId, projectId: record.projectId, apiKeyId: key?.id ?? null, model: typeof model === 'string' ? model : '' }, e);
}

/** Fails a resumed response that could not start again, with the error its request got. */
async function failResumed(ctx: AppContext, id: string, code: string, message: string): Promise<void> {
  await failBackground([id], code, message);
  await forgetResume(ctx, id);
  await ctx.redis.del(keys.backgroundJob(id));
}

/**
 * Sends a lapsed background response's request again, through this pod's ticket app with the kept
 * identity (checked again now), for the same stored response, as request `<request id>.r<n>` (a new
 * request id: job ids are request ids, and a worker refuses a job id it saw cancelled); the run then
 * goes on on this pod as a background run does (background.ts). A request refused now (its key
 * revoked, its model gone) ends the response `failed` with that error, and has its Activity row (the
 * ticket app's, or logRefused's when it never reached it).
 */
async function resume(ctx: AppContext, id: string, record: ResumeRecord, n: number, job: string | null): Promise<void> {
  // the lost pod's job may still run on a worker: cancelled (its upstream request aborted, not billed unless answered)
  await cancelLeasedJob(ctx, job);
  const requestId = `${record.requestId}.r${n}`;
  const auth = await identityNow(ctx, record, 'made this background response');
  if (auth instanceof ApiError) {
    await logRefused(ctx, record, requestId, auth);
    return failResumed(ctx, id, auth.code, auth.message);
  }
  const app = await ticketApp(ctx);
  const resumed = { responseId: id, createdAt: record.createdAt, receivedAt: record.receivedAt };
  const ticket = app.issue({ auth, requestId, resume: resumed });
  try {
    const res = await request(`${app.base}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-gateway-ticket': ticket }, body: record.body });
    const text = await res.body.text();
    if (res.statusCode === 200) return;
    let error: { code?: unknown; message?: unknown } | undefined;
    try {
      error = (JSON.parse(text) as { error?: typeof error }).error;
    } catch {
      // not JSON: the generic failure below
    }
    await failResumed(ctx, id, typeof error?.code === 'string' ? error.code : 'server_error', typeof error?.message === 'string' ? error.message : NOT_RESUMED);
  } finally {
    app.forget(ticket);
  }
}

/**
 * A pod's look for background responses whose pod was lost (their lease lapsed) that it can resume:
 * each is claimed with the lease itself (SET NX, so one pod takes it), counted, and sent again
 * (resume); one resumed RESUME_MAX times already is left to the clock, which fails it. Returns how
 * many this pod took. Runs every third of a lease on each web pod (startAdopting).
 */
export async function adoptLapsed(ctx: AppContext): Promise<number> {
  let taken = 0;
  for (const id of await runningBackground()) {
    const k = keys.backgroundResume(id);
    const [sealed, resumes, job] = await ctx.redis.hmget(k, 's', 'n', 'j');
    if (!sealed || Number(resumes) >= RESUME_MAX) continue;
    if ((await ctx.redis.set(keys.backgroundJob(id), `resuming ${ctx.podId}`, 'PX', BACKGROUND_LEASE_MS, 'NX')) !== 'OK') continue;
    const n = await ctx.redis.hincrby(k, 'n', 1);
    await ctx.redis.del(keys.backgroundLapsed(id)); // the clock's count of its lapse starts again if this pod is lost too
    taken++;
    let record: ResumeRecord;
    try {
      record = JSON.parse(decrypt(sealed)) as ResumeRecord;
    } catch (err) {
      // sealed under another SECRET_KEY: nothing can resume it
      logger.warn({ err, responseId: id }, 'background response not resumable');
      await failResumed(ctx, id, LOST_RUN.code, LOST_RUN.message);
      continue;
    }
    logger.info({ responseId: id, requestId: record.requestId }, 'resuming a background response whose pod was lost');
    void resume(ctx, id, record, n, job).catch(async (err: unknown) => {
      logger.warn({ err, responseId: id }, 'background response not resumed');
      await failResumed(ctx, id, 'server_error', NOT_RESUMED).catch(() => undefined);
    });
  }
  return taken;
}

/** Looks for lapsed background responses every third of a lease (with some spread between pods) until the returned stop is called. */
export function startAdopting(ctx: AppContext): () => Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const next = () => {
    timer = setTimeout(() => {
      adoptLapsed(ctx)
        .catch((err: unknown) => logger.warn({ err }, 'looking for lapsed background responses failed'))
        .finally(() => timer && next());
    }, (BACKGROUND_LEASE_MS / 3) * (0.75 + Math.random() / 2));
    timer.unref();
  };
  next();
  return async () => {
    clearTimeout(timer);
    timer = undefined;
    await closeResumeApp(ctx);
  };
}

/** A new response's frame: its id and creation time, or, for a resumed background response, its own. */
export function responseFrame(req: Request, publicModel: string, body: ResponsesRequest): ResponseFrame {
  const r = req.resumedResponse;
  return { id: r ? r.responseId : newId('resp'), createdAt: r ? r.createdAt : Math.floor(Date.now() / 1000), publicModel, req: body };
}
