import { Router, type Request, type Response, type NextFunction } from 'express';
import multer from 'multer';
import Joi from 'joi';
import type { AppContext } from '../../context';
import { only } from '../only';
import { killSwitch } from '../../middleware/kill-switch';
import { ApiError } from '../../../shared/errors/ApiError';
import { errors } from '../../../shared/errors/codes';
import { batchLimits } from '../../../shared/batches/limits';
import { deleteFile, fileBytes, findFile, listFiles, saveFile } from '../../../shared/batches/files';
import { presentFile } from '../../../shared/batches/present';
import { newId } from '../../../shared/batches/ids';
import { validate } from '../../validate';
import { expiresAfterSchema, pageLimit, queryText, queryOrder } from './gate';

/**
 * Multipart `file` + `purpose`, held in memory up to the org's file size cap (413 beyond it). The
 * part's `filename` is read as UTF-8, as the SDKs send it (multer's default reads it as latin1).
 */
function upload(req: Request, res: Response, next: NextFunction): void {
  const max = batchLimits(req.auth!.org, 'openai').maxFileBytes;
  multer({ storage: multer.memoryStorage(), limits: { fileSize: max, files: 1, fields: 4 }, defParamCharset: 'utf8' }).single('file')(req, res, (err: unknown) => {
    if (!err) return next();
    const code = (err as { code?: string }).code;
    if (code === 'LIMIT_FILE_SIZE') return next(new ApiError(413, 'file_too_large', `A file may be at most ${max} bytes for this organization.`, { param: 'file' }));
    next(errors.invalidRequest(`Malformed multipart body: ${(err as Error).message}`)); // busboy's and multer's, never a 500
  });
}

/** `expires_after[anchor]` and `expires_after[seconds]` as multipart fields (append-field nests them; the seconds arrive as text). */
const expiresSchema = Joi.object({ expires_after: expiresAfterSchema }).unknown(true);

async function create(req: Request, res: Response): Promise<void> {
  const purpose = (req.body as Record<string, unknown> | undefined)?.purpose;
  if (purpose !== 'batch') throw new ApiError(400, 'invalid_request', "`purpose` must be 'batch' (the only purpose this gateway stores).", { param: 'purpose' });
  const file = req.file;
  if (!file) throw new ApiError(400, 'invalid_request', 'A `file` part (JSONL) is required.', { param: 'file' });
  if (!file.buffer.length) throw new ApiError(400, 'invalid_request', 'The file is empty.', { param: 'file' });
  const { expires_after } = validate<{ expires_after?: { seconds: number } }>(expiresSchema, { ...(req.body as object) }, 'invalid_request', true);
  const id = newId('file-');
  const auth = req.auth!;
  const name = (file.originalname || 'batch.jsonl').slice(0, 255);
  await saveFile(id, { orgId: auth.orgId, projectId: auth.projectId, apiKeyId: auth.keyId }, 'batch', name, file.buffer, expires_after?.seconds);
  res.json(presentFile((await findFile(auth, id))!));
}

async function list(req: Request, res: Response): Promise<void> {
  const order = queryOrder(req.query, 'desc');
  const limit = pageLimit(req.query.limit, 10_000, 10_000);
  const rows = await listFiles(req.auth!, { after: queryText(req.query, 'after'), limit: limit + 1, purpose: queryText(req.query, 'purpose'), order });
  const data = rows.slice(0, limit).map(presentFile);
  res.json({ object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > limit });
}

async function owned(req: Request) {
  const f = await findFile(req.auth!, String(req.params.id));
  if (!f) throw new ApiError(404, 'file_not_found', `No such file: ${String(req.params.id).slice(0, 80)}.`, { param: 'file_id' });
  return f;
}

export function filesRouter(ctx: AppContext): Router {
  const r = Router();
  const off = killSwitch(ctx.switches, 'batches');
  only(r, '/v1/files', { post: [off, upload, create], get: [off, list] });
  only(r, '/v1/files/:id', {
    get: [off, async (req: Request, res: Response) => res.json(presentFile(await owned(req)))],
    delete: [off, async (req: Request, res: Response) => {
      const f = await owned(req);
      await deleteFile(req.auth!, f.id);
      res.json({ id: f.id, object: 'file', deleted: true });
    }],
  });
  only(r, '/v1/files/:id/content', {
    get: [off, async (req: Request, res: Response) => {
      const f = await owned(req);
      const bytes = await fileBytes(f);
      if (!bytes) throw errors.notFound('The file content is gone.');
      res.type('application/jsonl').send(bytes);
    }],
  });
  return r;
}
