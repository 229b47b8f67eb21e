import fs from 'fs';
import path from 'path';
import crypto from 'crypto';
import { config } from '../config/env';

/**
 * What a spool file holds, as its name's suffix: `audio` (a transcription's upload, read by the audio
 * worker) or `image` (an image edit's or upload's file part, read back by the web process itself).
 */
export type SpoolKind = 'audio' | 'image';
const KINDS: readonly SpoolKind[] = ['audio', 'image'];

/**
 * The spool: uploads are streamed here by the web process while the body is read, so no file part is
 * ever held whole in memory. Uploaded audio is read by the audio worker, so both must see the same
 * directory (`AUDIO_SPOOL_DIR`; a shared volume in a split deployment). Files are named by a random
 * id, never by the uploaded filename, and are owner-readable only.
 */
export function spoolDir(): string {
  return config().audioSpoolDir;
}

export async function ensureSpoolDir(): Promise<string> {
  const dir = spoolDir();
  await fs.promises.mkdir(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/**
 * Creates spool file `id` (owner-only, never an existing one) before any of the upload is read. A
 * directory that went away while the process ran (a temporary-files cleaner, an operator) is made
 * again, so one lost directory never fails every later upload.
 */
export async function createSpoolFile(id: string, kind: SpoolKind): Promise<{ path: string; handle: fs.promises.FileHandle }> {
  const file = spoolPath(id, kind);
  try {
    return { path: file, handle: await fs.promises.open(file, 'wx', 0o600) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await ensureSpoolDir();
    return { path: file, handle: await fs.promises.open(file, 'wx', 0o600) };
  }
}

/** A fresh spool id of `kind`: request id plus randomness, safe as a file name. */
export function newSpoolId(requestId: string, kind: SpoolKind): string {
  return `${requestId.replace(/[^A-Za-z0-9_-]/g, '')}-${crypto.randomBytes(6).toString('hex')}.${kind}`;
}

/** The path of a spool id of `kind`; ids of another kind, or that could escape the directory, are refused. */
export function spoolPath(id: string, kind: SpoolKind): string {
  if (!/^[A-Za-z0-9_-]+\.[a-z]+$/.test(id) || !id.endsWith(`.${kind}`)) throw new Error('invalid spool id');
  return path.join(spoolDir(), id);
}

/** Deletes a spool file; a file already gone is fine. */
export async function removeSpoolFile(file: string): Promise<void> {
  await fs.promises.unlink(file).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}

/**
 * Removes spool files (of every kind, or of `kinds`) older than `maxAgeMs`: left behind only when a
 * process died mid-request (every request deletes its own files however it ends). Returns how many
 * were removed.
 */
export async function sweepSpool(maxAgeMs: number, kinds: readonly SpoolKind[] = KINDS): Promise<number> {
  const dir = spoolDir();
  let names: string[];
  try {
    names = await fs.promises.readdir(dir);
  } catch {
    return 0;
  }
  const cutoff = Date.now() - maxAgeMs;
  let removed = 0;
  for (const name of names) {
    if (!kinds.some((kind) => name.endsWith(`.${kind}`))) continue;
    const file = path.join(dir, name);
    const st = await fs.promises.stat(file).catch(() => undefined);
    if (st && st.mtimeMs < cutoff) {
      await removeSpoolFile(file).catch(() => undefined);
      removed++;
    }
  }
  return removed;
}

/**
 * The web process's own sweep of the image file parts it spools (a web pod that died mid-upload
 * leaves them): every minute, `.image` files older than the request timeout and a minute more, so a
 * deployment without audio workers (whose sweep covers every kind) or whose web pods keep the spool
 * on a volume of their own still removes them. Returns its stop.
 */
export function startImageSpoolSweep(maxAgeMs: number, everyMs = 60_000): () => void {
  const timer = setInterval(() => void sweepSpool(maxAgeMs, ['image']).catch(() => undefined), everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
