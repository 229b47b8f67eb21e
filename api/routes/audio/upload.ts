import type { Readable } from 'stream';
import multer from 'multer';
import type { Request, Response } from 'express';
import { ApiError } from '../../../shared/errors/ApiError';
import { ClientGone } from '../../../shared/errors/ClientGone';
import { audioErrors } from '../../../shared/audio/errors';
import { closeSpool, spoolStorage, type SpoolTracker } from '../spool-storage';

/** The spec's transcription limits. */
export const AUDIO_LIMITS = {
  maxFileBytes: 25 * 1024 * 1024,
  maxParts: 16,
  maxTextPartBytes: 64 * 1024,
  maxPartNameBytes: 200,
};

/** One part of the body, in arrival order. Text values are kept (each at most 64 KiB). */
export interface UploadPart {
  name: string;
  file: boolean;
  value?: string;
}

export interface SpooledFile {
  path: string;
  spoolId: string;
  size: number;
  /** The uploaded filename's extension (lowercase, no dot) when it is a plain one. Never the name. */
  ext: string | undefined;
  contentType: string;
}

export interface AudioUpload {
  parts: UploadPart[];
  file: SpooledFile | undefined;
  /** Deletes the spool file; safe to call more than once. */
  cleanup(): Promise<void>;
}

interface Tracker extends SpoolTracker {
  parts: UploadPart[];
  fileAccepted: boolean;
  onFileLimit(): void;
}

const trackers = new WeakMap<Request, Tracker>();

/** Streams the accepted file part to the spool, never holding it whole in memory. */
const audioSpool = spoolStorage('audio', (req) => trackers.get(req)!);

const busboyOf = (fn: (req: Request, busboy: NodeJS.WritableStream & NodeJS.EventEmitter) => void) => fn;

const upload = multer({
  storage: audioSpool,
  limits: {
    fileSize: AUDIO_LIMITS.maxFileBytes,
    parts: AUDIO_LIMITS.maxParts,
    fieldSize: AUDIO_LIMITS.maxTextPartBytes,
    fieldNameSize: AUDIO_LIMITS.maxPartNameBytes,
  },
  fileFilter(req, file, cb) {
    const t = trackers.get(req as Request)!;
    if (file.fieldname !== 'file') return cb(null, false); // reported as an unknown or misplaced part after the read
    if (t.fileAccepted) return cb(audioErrors.invalidRequest("The 'file' part appears more than once.", 'file'));
    t.fileAccepted = true;
    cb(null, true);
  },
  // Sees every part as busboy reports it (raw names, in order), then feeds the body as multer would.
  streamHandler: busboyOf((req, busboy) => {
    const t = trackers.get(req)!;
    busboy.on('field', (name: string, value: string, info: { valueTruncated?: boolean }) => {
      if (!info?.valueTruncated) t.parts.push({ name, file: false, value });
    });
    busboy.on('file', (name: string, stream: Readable) => {
      t.parts.push({ name, file: true });
      if (name === 'file') stream.on('limit', () => t.onFileLimit());
    });
    req.pipe(busboy);
  }),
} as multer.Options).any();

/** A part's name as quoted in error messages (cut to 64 characters). */
export const label = (name: string | undefined) => `'${partName(name)}'`;

/** A part's name as the error's `param` (cut as `label` cuts it); none when it has none. */
export const partName = (name: string | undefined) => String(name ?? '').slice(0, 64);
export const paramOf = (name: string | undefined) => partName(name) || undefined;

/** multer and busboy errors as the spec's codes. Messages name parts, never values or filenames. */
function mapUploadError(err: unknown, req: Request): unknown {
  if (err instanceof ApiError) return err;
  // the spool could not be written (disk full, directory unusable): the gateway's fault, not the body's
  if (typeof (err as NodeJS.ErrnoException).syscall === 'string') return err;
  if (!req.socket || req.socket.destroyed) return new ClientGone(); // no one left to answer
  const e = err as { code?: string; field?: string; message?: string };
  switch (e.code) {
    case 'LIMIT_FILE_SIZE':
      return audioErrors.tooLarge(AUDIO_LIMITS.maxFileBytes);
    case 'LIMIT_PART_COUNT':
      return audioErrors.invalidRequest(`The body has more than ${AUDIO_LIMITS.maxParts} parts.`);
    case 'LIMIT_FIELD_VALUE':
      // busboy reads a part without a filename as text: a `file` part sent that way ends up here
      if (e.field === 'file') return audioErrors.invalidRequest("The part 'file' must be a file upload: it was sent without a filename.", 'file');
      return audioErrors.invalidRequest(`The text part ${label(e.field)} is larger than ${AUDIO_LIMITS.maxTextPartBytes / 1024} KiB.`, paramOf(e.field));
    case 'LIMIT_FIELD_KEY':
      return audioErrors.invalidRequest(`A part name is longer than ${AUDIO_LIMITS.maxPartNameBytes} bytes.`);
    case 'MISSING_FIELD_NAME':
      return audioErrors.invalidRequest('A part has no name.');
    case 'INVALID_FIELD_NAME':
    case 'LIMIT_FIELD_NESTING':
    case 'LIMIT_FIELD_ARRAY_INDEX':
      return audioErrors.unsupportedParameter(`The part ${label(e.field)} is not supported.`, paramOf(e.field));
  }
  if (e.message === 'Request aborted' || e.message === 'Request closed') return new ClientGone();
  return audioErrors.invalidRequest('The multipart/form-data body is malformed or truncated.');
}

/**
 * Reads a transcription's multipart body: the `file` part streams to the spool (25 MiB cap,
 * enforced while reading), text parts are kept in order (64 KiB each, 16 parts at most). The whole
 * body must arrive within `readTimeoutMs` (408 `body_read_timeout`). On any failure the spool file
 * is deleted before the promise rejects.
 */
export function readAudioUpload(req: Request, _res: Response, readTimeoutMs: number): Promise<AudioUpload> {
  const t: Tracker = { parts: [], spooled: [], fileAccepted: false, onFileLimit: () => undefined };
  trackers.set(req, t);
  const readBy = Date.now() + readTimeoutMs;
  const cleanup = () => closeSpool(t);

  return new Promise<AudioUpload>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // An answer may go out before the body is in (oversized, timed out): keep reading and
      // discarding it, but never past the read deadline.
      if (!req.complete && !(err instanceof ClientGone)) {
        req.unpipe();
        req.resume();
        const linger = setTimeout(() => req.socket?.destroy(), Math.max(0, readBy - Date.now()) + 1000);
        linger.unref();
        req.once('end', () => clearTimeout(linger));
      }
      void cleanup().then(() => reject(err));
    };
    timer = setTimeout(() => {
      const e = audioErrors.bodyReadTimeout(readTimeoutMs);
      e.headers.Connection = 'close';
      fail(e);
    }, readTimeoutMs);
    t.onFileLimit = () => fail(audioErrors.tooLarge(AUDIO_LIMITS.maxFileBytes));

    upload(req, _res, (err?: unknown) => {
      if (settled) return;
      if (err) return fail(mapUploadError(err, req));
      settled = true;
      clearTimeout(timer);
      const stored = (req.files as Express.Multer.File[] | undefined)?.[0];
      const ext = stored ? /\.([A-Za-z0-9]{1,8})$/.exec(stored.originalname ?? '')?.[1]?.toLowerCase() : undefined;
      resolve({
        parts: t.parts,
        file: stored && {
          path: stored.path,
          spoolId: stored.filename,
          size: stored.size,
          ext,
          contentType: stored.mimetype || 'application/octet-stream',
        },
        cleanup,
      });
    });
  });
}
