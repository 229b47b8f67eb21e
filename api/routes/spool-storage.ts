import fs from 'fs';
import { pipeline } from 'stream';
import type multer from 'multer';
import type { Request } from 'express';
import { createSpoolFile, newSpoolId, removeSpoolFile, type SpoolKind } from '../../shared/spool/spool';

/** One file part being (or done being) written to the spool. */
export interface SpooledPart {
  path: string;
  out: fs.WriteStream;
}

/** A request's spool files, as its multipart body is read. */
export interface SpoolTracker {
  spooled: SpooledPart[];
  /** The upload's files were cleaned up (it failed, or its request is done): a file created since is removed at once. */
  closed?: boolean;
}

/** Closes a spooled file's stream and deletes the file (a failure to delete is left to the spool's sweep). */
const discard = (f: SpooledPart): Promise<void> => {
  f.out.destroy();
  return removeSpoolFile(f.path).catch(() => undefined);
};

/** Deletes every spool file of the request, and any it creates from now on; safe to call more than once. */
export async function closeSpool(t: SpoolTracker): Promise<void> {
  t.closed = true;
  for (const f of t.spooled) await discard(f);
}

/**
 * A multer storage engine that streams each accepted file part to a spool file of `kind` (named by a
 * random id, owner-only), never holding it whole in memory. The file object gets `path` (and `size`,
 * `filename` = the spool id), never `buffer`. `trackerOf` gives the request's tracker.
 */
export function spoolStorage(kind: SpoolKind, trackerOf: (req: Request) => SpoolTracker): multer.StorageEngine {
  return {
    _handleFile(req, file, cb) {
      const t = trackerOf(req as Request);
      const spoolId = newSpoolId((req as Request).id, kind);
      createSpoolFile(spoolId, kind).then(({ path: p, handle }) => {
        // multer's abort cleanup removes pending files that already have a path.
        (file as { path?: string }).path = p;
        const out = fs.createWriteStream(p, { fd: handle });
        if (t.closed) {
          // the upload failed (a client that left) while the file was being created, after its cleanup ran:
          // nothing else would remove this file
          file.stream.resume();
          void discard({ path: p, out });
          return cb(new Error('Request closed'));
        }
        t.spooled.push({ path: p, out });
        let size = 0;
        file.stream.on('data', (c: Buffer) => (size += c.length));
        pipeline(file.stream, out, (err) => (err ? cb(err) : cb(null, { path: p, size, filename: spoolId })));
      }, cb);
    },
    _removeFile(_req, file, cb) {
      removeSpoolFile(file.path).then(() => cb(null), cb);
    },
  };
}
