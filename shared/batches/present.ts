import type { BatchRow, LineCounts } from './store';
import type { FileRow } from './files';
import type { BatchUsage } from './usage';
import { config } from '../config/env';

const secs = (d: Date | null | undefined): number | undefined => (d ? Math.floor(new Date(d).getTime() / 1000) : undefined);
const iso = (d: Date | null | undefined): string | null => (d ? new Date(d).toISOString() : null);

/** OpenAI's FileObject. */
export function presentFile(f: FileRow): Record<string, unknown> {
  return { id: f.id, object: 'file', bytes: f.bytes, created_at: secs(f.created_at), filename: f.filename, purpose: f.purpose, status: 'processed', expires_at: secs(f.expires_at) ?? null, status_details: null };
}

/**
 * OpenAI's Batch: `model` the one model its lines name (null until they are read, or when they name
 * several), `request_counts` from the lines (an expired or cancelled line counts as failed, as
 * OpenAI's error file lists it), `usage` the answered lines' token totals.
 */
export function presentBatch(b: BatchRow, c: LineCounts, usage: BatchUsage): Record<string, unknown> {
  const total = b.status === 'validating' || (b.status === 'failed' && !b.total) ? 0 : b.total;
  return {
    id: b.id,
    object: 'batch',
    endpoint: b.endpoint,
    model: b.model ?? null,
    errors: b.errors ?? null,
    input_file_id: b.input_file_id,
    completion_window: b.completion_window,
    status: b.status,
    output_file_id: b.output_file_id,
    error_file_id: b.error_file_id,
    created_at: secs(b.created_at),
    in_progress_at: secs(b.in_progress_at) ?? null,
    expires_at: secs(b.expires_at),
    finalizing_at: secs(b.finalizing_at) ?? null,
    completed_at: secs(b.completed_at) ?? null,
    failed_at: secs(b.failed_at) ?? null,
    expired_at: secs(b.expired_at) ?? null,
    cancelling_at: secs(b.cancelling_at) ?? null,
    cancelled_at: secs(b.cancelled_at) ?? null,
    request_counts: { total, completed: c.succeeded, failed: c.errored + c.expired + c.canceled },
    metadata: b.metadata ?? null,
    usage,
  };
}

const ENDED = ['completed', 'failed', 'expired', 'cancelled'];

export const isEnded = (b: BatchRow): boolean => ENDED.includes(b.status);

/**
 * Anthropic's MessageBatch. `prefix` is the path prefix the request came in on (`/a/{key}`,
 * `/r/{plan}`, api/middleware/path-auth.ts pathPrefix): the SDK fetches `results_url` as it is.
 */
export function presentMessageBatch(b: BatchRow, c: LineCounts, prefix = ''): Record<string, unknown> {
  const ended = isEnded(b);
  return {
    id: b.id,
    type: 'message_batch',
    processing_status: ended ? 'ended' : b.status === 'cancelling' ? 'canceling' : 'in_progress',
    request_counts: { processing: c.pending + c.running, succeeded: c.succeeded, errored: c.errored, canceled: c.canceled, expired: c.expired },
    ended_at: ended ? iso(b.completed_at ?? b.cancelled_at ?? b.expired_at ?? b.failed_at) : null,
    created_at: iso(b.created_at),
    expires_at: iso(b.expires_at),
    archived_at: null,
    cancel_initiated_at: iso(b.cancelling_at),
    results_url: ended ? `${config().publicBaseUrl}${prefix}/v1/messages/batches/${b.id}/results` : null,
  };
}
