import { QueryTypes } from 'sequelize';
import { db } from '../db/sequelize';
import { merged } from '../merged';
import { scopeSql, scopeValues, type StoreScope } from '../tenancy/store-scope';
import { imageStorage } from '../storage';
import { config } from '../config/env';

/** A stored file (`batch_files`), as the routes and the runner read it. */
export interface FileRow {
  id: string;
  org_id: string;
  purpose: string;
  filename: string;
  bytes: number;
  storage_key: string;
  created_at: Date;
  expires_at: Date | null;
}

export interface FileOwner {
  orgId: string;
  projectId: string | null;
  apiKeyId: string | null;
}

const storageKey = (id: string) => `${id}.jsonl`;

/**
 * Stores a file's bytes (the image storage: local directory or S3 bucket, the same settings), then
 * its row; the row is written with ON CONFLICT DO NOTHING so a batch finalised twice keeps one file.
 * It expires `expiresAfterSeconds` after its creation (OpenAI's `expires_after` / a batch's
 * `output_expires_after`), else after BATCH_FILE_RETENTION_DAYS.
 */
export async function saveFile(id: string, owner: FileOwner, purpose: string, filename: string, bytes: Buffer, expiresAfterSeconds?: number | null): Promise<void> {
  await imageStorage().put(storageKey(id), bytes, 'application/jsonl');
  const ttlMs = expiresAfterSeconds ? expiresAfterSeconds * 1000 : config().batches.fileRetentionDays * 86_400_000;
  await db().query(
    `INSERT INTO batch_files (id, org_id, project_id, api_key_id, purpose, filename, bytes, storage_key, created_at, expires_at)
     VALUES (:id, :org, :project, :key, :purpose, :filename, :bytes, :storageKey, now(), now() + (:ttlMs || ' milliseconds')::interval)
     ON CONFLICT (id) DO NOTHING`,
    { replacements: { id, org: owner.orgId, project: owner.projectId, key: owner.apiKeyId, purpose, filename, bytes: bytes.length, storageKey: storageKey(id), ttlMs: String(ttlMs) } },
  );
}

/** The scope's file, or null (another org's or another project's file is as unknown as a missing one; shared/tenancy/store-scope.ts). */
export async function findFile(scope: StoreScope, id: string): Promise<FileRow | null> {
  const [row] = await db().query<FileRow>(`SELECT * FROM batch_files WHERE id = :id AND ${scopeSql(scope)} AND (expires_at IS NULL OR expires_at > now())`, {
    type: QueryTypes.SELECT,
    replacements: merged(scopeValues(scope), { id }),
  });
  return row ?? null;
}

export async function fileBytes(row: FileRow): Promise<Buffer | undefined> {
  return imageStorage().get(row.storage_key);
}

/** Newest first, `after` a file id (cursor), at most `limit`, optionally one purpose. */
export async function listFiles(scope: StoreScope, opts: { after?: string; limit: number; purpose?: string; order: 'asc' | 'desc' }): Promise<FileRow[]> {
  const cmp = opts.order === 'desc' ? '<' : '>';
  return db().query<FileRow>(
    `SELECT * FROM batch_files f WHERE ${scopeSql(scope)} AND (expires_at IS NULL OR expires_at > now())
       ${opts.purpose ? 'AND purpose = :purpose' : ''}
       ${opts.after ? `AND (created_at, id) ${cmp} (SELECT created_at, id FROM batch_files WHERE id = :after AND org_id = :orgId)` : ''}
     ORDER BY created_at ${opts.order}, id ${opts.order} LIMIT :limit`,
    { type: QueryTypes.SELECT, replacements: merged(scopeValues(scope), { after: opts.after ?? null, limit: opts.limit, purpose: opts.purpose ?? null }) },
  );
}

/** Deletes the row, then the bytes; true when the scope had it. */
export async function deleteFile(scope: StoreScope, id: string): Promise<boolean> {
  const [rows] = await db().query(`DELETE FROM batch_files WHERE id = :id AND ${scopeSql(scope)} RETURNING storage_key`, { replacements: merged(scopeValues(scope), { id }) });
  const row = (rows as { storage_key: string }[])[0];
  if (!row) return false;
  await imageStorage().delete(row.storage_key);
  return true;
}

/** The clock's sweep: files past their retention, rows and bytes. */
export async function expireFiles(): Promise<number> {
  const [rows] = await db().query('DELETE FROM batch_files WHERE expires_at <= now() RETURNING storage_key');
  for (const r of rows as { storage_key: string }[]) await imageStorage().delete(r.storage_key).catch(() => undefined);
  return (rows as unknown[]).length;
}
