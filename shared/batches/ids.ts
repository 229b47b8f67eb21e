import crypto from 'crypto';

/** Opaque ids in the vendors' spellings: `file-…`, `batch_…` (OpenAI), `msgbatch_…` (Anthropic). */
export const newId = (prefix: 'file-' | 'batch_' | 'msgbatch_'): string => `${prefix}${crypto.randomBytes(12).toString('hex')}`;

/** Ids of a batch's output and error files: derived from the batch, so finalising twice writes the same files. */
export const outputFileId = (batchId: string, kind: 'output' | 'error'): string => `file-${kind === 'output' ? 'o' : 'e'}${batchId.replace(/^[a-z]+_/, '')}`;
