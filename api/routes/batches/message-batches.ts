import { Router, type Request, type Response, type NextFunction } from 'express';
import Joi from 'joi';
import type { AppContext } from '../../context';
import { only } from '../only';
import { jsonBody } from '../../middleware/body';
import { requireJson } from '../../middleware/require-json';
import { killSwitch } from '../../middleware/kill-switch';
import { requireAnthropicVersion } from '../messages/version';
import { anthropicBeta } from '../messages/beta';
import { pathPrefix } from '../../middleware/path-auth';
import { validate } from '../../validate';
import { ApiError } from '../../../shared/errors/ApiError';
import { isEnded, presentMessageBatch } from '../../../shared/batches/present';
import { anthropicResultLine } from '../../../shared/batches/results';
import { newId } from '../../../shared/batches/ids';
import { batchLimits } from '../../../shared/batches/limits';
import * as store from '../../../shared/batches/store';
import { admitBatch, pageLimit, queryText } from './gate';

const createSchema = Joi.object({
  requests: Joi.array()
    .min(1)
    .items(Joi.object({ custom_id: Joi.string().pattern(/^[a-zA-Z0-9_-]{1,64}$/).required(), params: Joi.object().unknown(true).required() }))
    .unique('custom_id')
    .required(),
});

async function answer(req: Request, res: Response, b: store.BatchRow): Promise<void> {
  res.json(presentMessageBatch(b, (await store.lineCounts([b.id])).get(b.id)!, pathPrefix(req)));
}

async function owned(req: Request): Promise<store.BatchRow> {
  const b = await store.getBatch(req.auth!, String(req.params.id), 'anthropic');
  if (!b) throw new ApiError(404, 'not_found', `No such message batch: ${String(req.params.id).slice(0, 80)}.`);
  return b;
}

/** `POST /v1/messages/batches`: the requests become lines at once (`in_progress`); each `params` is checked when its line runs. */
async function create(req: Request, res: Response): Promise<void> {
  const count = Array.isArray((req.body as { requests?: unknown })?.requests) ? (req.body as { requests: unknown[] }).requests.length : 0;
  const body = validate<{ requests: { custom_id: string; params: Record<string, unknown> }[] }>(createSchema, req.body);
  const auth = req.auth!;
  const beta = anthropicBeta(req); // checked now (400 when not a list of names), sent with every line
  const admitted = await admitBatch(req, count, 'anthropic');
  const id = newId('msgbatch_');
  await store.insertBatch(
    {
      id,
      dialect: 'anthropic',
      org_id: auth.orgId,
      project_id: auth.projectId,
      api_key_id: auth.keyId,
      key_hash: admitted.keyHash,
      routing_plan_id: auth.routingPlanId,
      endpoint: '/v1/messages',
      input_file_id: null,
      completion_window: '24h',
      metadata: null,
      status: 'in_progress',
      price_multiplier: String(admitted.priceMultiplier),
      total: body.requests.length,
      created_at: admitted.createdAt,
      expires_at: admitted.expiresAt,
      anthropic_beta: beta ?? null,
    },
    body.requests.map((r) => ({ custom_id: r.custom_id, body: r.params })),
  );
  await answer(req, res, (await store.batchById(id))!);
}

/** Anthropic's page: `{data, has_more, first_id, last_id}`, `after_id` / `before_id` cursors, `limit` 1..1000 (default 20, its List Message Batches reference). */
async function list(req: Request, res: Response): Promise<void> {
  const limit = pageLimit(req.query.limit, 1000);
  const before = queryText(req.query, 'before_id');
  const rows = await store.listBatches(req.auth!, 'anthropic', { after: queryText(req.query, 'after_id'), before, limit: limit + 1 });
  const page = before ? rows.slice(-limit) : rows.slice(0, limit);
  const counts = await store.lineCounts(page.map((b) => b.id));
  const data = page.map((b) => presentMessageBatch(b, counts.get(b.id)!, pathPrefix(req)));
  res.json({ data, has_more: rows.length > limit, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
}

/**
 * `canceling` at once (again: the batch as it is). Anthropic's document: "Batches may be canceled
 * any time before processing ends"; an ended batch is 400 invalid_request_error (the type Anthropic
 * gives 4xx it does not name), as deleting one still processing is. A batch `finalizing` (every line
 * finished, the runner about to end it; shown `in_progress`, Anthropic having no such state) has not
 * ended either: it becomes `canceling` and then ends, its lines keeping their results. Before, that
 * cancel answered the batch still `in_progress` with no `cancel_initiated_at` and was dropped.
 * Whichever of this update and the runner's end comes first wins (both are conditional on the status).
 */
async function cancel(req: Request, res: Response): Promise<void> {
  const b = await owned(req);
  if (!(await store.transition(b.id, ['in_progress', 'finalizing'], 'cancelling'))) {
    const now = (await store.batchById(b.id))!;
    if (isEnded(now)) throw new ApiError(400, 'batch_not_cancellable', `Message Batch ${b.id} has ended; only a batch still processing can be canceled.`);
  }
  await answer(req, res, (await store.batchById(b.id))!);
}

/**
 * The results, one JSON line per request in request order, once the batch has ended, as
 * `application/x-jsonl` (what Anthropic's API sends and the SDK asks for in `Accept`): the Ruby and
 * PHP SDKs decode the lines only under a JSONL content type.
 */
async function results(req: Request, res: Response): Promise<void> {
  const b = await owned(req);
  if (!isEnded(b)) throw new ApiError(400, 'invalid_request', `Message Batch ${b.id} has not ended; its results are not ready.`);
  const lines = await store.finishedLines(b.id);
  res.type('application/x-jsonl').send(lines.map(anthropicResultLine).join('\n') + '\n');
}

async function remove(req: Request, res: Response): Promise<void> {
  const b = await owned(req);
  if (!isEnded(b)) throw new ApiError(400, 'invalid_request', `Message Batch ${b.id} is still processing; cancel it and wait for it to end before deleting it.`);
  await store.markDeleted(b.id);
  res.json({ id: b.id, type: 'message_batch_deleted' });
}

/**
 * The create body, read up to the org's `batch_max_file_bytes` (its plan's or its own entitlement,
 * else MESSAGE_BATCH_MAX_BYTES, Anthropic's 256 MB; docs/batches.md, "Limits"), as an upload is: 413 beyond it.
 */
function batchBody(req: Request, res: Response, next: NextFunction): void {
  jsonBody(batchLimits(req.auth!.org, 'anthropic').maxFileBytes)(req, res, next);
}

export function messageBatchesRouter(ctx: AppContext): Router {
  const r = Router();
  const pre = [killSwitch(ctx.switches, 'batches'), requireAnthropicVersion];
  only(r, '/v1/messages/batches', { post: [...pre, batchBody, requireJson, create], get: [...pre, list] });
  only(r, '/v1/messages/batches/:id', { get: [...pre, async (req: Request, res: Response) => answer(req, res, await owned(req))], delete: [...pre, remove] });
  only(r, '/v1/messages/batches/:id/cancel', { post: [...pre, cancel] });
  only(r, '/v1/messages/batches/:id/results', { get: [...pre, results] });
  return r;
}
