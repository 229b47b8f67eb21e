import * as spool from '../spool/spool';

/**
 * The audio side of the spool (shared/spool/spool.ts): a transcription's upload is an `<id>.audio`
 * file, which the audio worker reads by id and deletes when its job ends.
 */
export { spoolDir, ensureSpoolDir, removeSpoolFile, sweepSpool } from '../spool/spool';

/** A fresh audio spool id: request id plus randomness, safe as a file name. */
export const newSpoolId = (requestId: string): string => spool.newSpoolId(requestId, 'audio');

/** The path of an audio spool id; ids of another kind, or that could escape the directory, are refused. */
export const spoolPath = (id: string): string => spool.spoolPath(id, 'audio');
