import { Router, type Request, type Response } from 'express';
import Joi from 'joi';
import type { AppContext } from '../../context';
import { only } from '../only';
import { jsonBody } from '../../middleware/body';
import { requireJson } from '../../middleware/require-json';
import { killSwitch } from '../../middleware/kill-switch';
import { validate } from '../../validate';
import { ApiError } from '../../../shared/errors/ApiError';
import { fileBytes, findFile } from '../../../shared/batches/files';
import { jsonlLines } from '../../../shared/batches/input';
import { presentBatch } from '../../../shared/batches/present';
import { newId } from '../../../shared/batches/ids';
import * as store from '../../../shared/batches/store';
import { lineUsage } from '../../../shared/batches/usage';
import { admitBatch, expiresAfterSchema, pageLimit, queryText } from './gate';

export const BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/completions', '/v1/embeddings', '/v1/responses'] as const;

const createSchema = Joi.object({
  input_file_id: Joi.string().max(64).required(),
  endpoint: Joi.string().valid(...BATCH_ENDPOINTS).required(),
  completion_window: Joi.string().valid('24h').required(),
  metadata: Joi.object().pattern(Joi.string().max(64), Joi.string().max(512)).max(16).allow(null),
  output_expires_after: expiresAfterSchema,
});

async function answer(res: Response, b: store.BatchRow): Promise<void> {
  const [counts, usage] = await Promise.all([store.lineCounts([b.id]), lineUsage([b.id])]);
  res.json(presentBatch(b, counts.get(b.id)!, usage.get(b.id)!));
}

async function owned(req: Request): Promise<store.BatchRow> {
  const b = await store.getBatch(req.auth!, String(req.params.id), 'openai');
  if (!b) throw new ApiError(404, 'batch_not_found', `No such batch: ${String(req.params.id).slice(0, 80)}.`, { param: 'batch_id' });
  return b;
}

/** `POST /v1/batches`: the file is checked and counted now, parsed into lines by the runner (status `validating`). */
async function create(req: Request, res: Response): Promise<void> {
  const body = validate<{ input_file_id: string; endpoint: string; completion_window: string; metadata?: Record<string, string> | null; output_expires_after?: { seconds: number } }>(
    createSchema,
    req.body,
  );
  const auth = req.auth!;
  const file = await findFile(auth, body.input_file_id);
  if (!file) throw new ApiError(404, 'file_not_found', `No such file: ${body.input_file_id}.`, { param: 'input_file_id' });
  // the file exists (GET /v1/files/{id} answers it): not a 404, the wrong kind of file (OpenAI: "must be uploaded with the purpose `batch`")
  if (file.purpose !== 'batch') throw new ApiError(400, 'invalid_request', `The file ${file.id} has purpose '${file.purpose}'; a batch's input file must be uploaded with purpose 'batch'.`, { param: 'input_file_id' });
  const bytes = await fileBytes(file);
  if (!bytes) throw new ApiError(404, 'file_not_found', `The file ${body.input_file_id} has no content.`, { param: 'input_file_id' });
  const admitted = await admitBatch(req, jsonlLines(bytes).length, 'openai');
  const id = newId('batch_');
  await store.insertBatch({
    id,
    dialect: 'openai',
    org_id: auth.orgId,
    project_id: auth.projectId,
    api_key_id: auth.keyId,
    key_hash: admitted.keyHash,
    routing_plan_id: auth.routingPlanId,
    endpoint: body.endpoint,
    input_file_id: file.id,
    completion_window: body.completion_window,
    metadata: body.metadata ?? null,
    status: 'validating',
    price_multiplier: String(admitted.priceMultiplier),
    total: 0,
    created_at: admitted.createdAt,
    expires_at: admitted.expiresAt,
    output_expires_after_seconds: body.output_expires_after?.seconds ?? null,
  });
  await answer(res, (await store.batchById(id))!);
}

async function list(req: Request, res: Response): Promise<void> {
  const limit = pageLimit(req.query.limit);
  const rows = await store.listBatches(req.auth!, 'openai', { after: queryText(req.query, 'after'), limit: limit + 1 });
  const page = rows.slice(0, limit);
  const ids = page.map((b) => b.id);
  const [counts, usage] = await Promise.all([store.lineCounts(ids), lineUsage(ids)]);
  const data = page.map((b) => presentBatch(b, counts.get(b.id)!, usage.get(b.id)!));
  res.json({ object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > limit });
}

/** `cancelling` at once; the runner closes the lines not started and ends the batch `cancelled` once in-flight lines are in. */
async function cancel(req: Request, res: Response): Promise<void> {
  const b = await owned(req);
  if (!(await store.transition(b.id, ['validating', 'in_progress'], 'cancelling')) && !['cancelling', 'cancelled'].includes((await store.batchById(b.id))!.status)) {
    throw new ApiError(409, 'batch_not_cancellable', `The batch is ${b.status}; only a validating or in-progress batch can be cancelled.`);
  }
  await answer(res, (await store.batchById(b.id))!);
}

export function openaiBatchesRouter(ctx: AppContext): Router {
  const r = Router();
  const off = killSwitch(ctx.switches, 'batches');
  only(r, '/v1/batches', { post: [off, jsonBody('1mb'), requireJson, create], get: [off, list] });
  only(r, '/v1/batches/:id', { get: [off, async (req: Request, res: Response) => answer(res, await owned(req))] });
  only(r, '/v1/batches/:id/cancel', { post: [off, cancel] });
  return r;
}
