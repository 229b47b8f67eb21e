import type { BatchRow, LineRow } from './store';
import { isRecord } from '../is-record';

/** OpenAI's id of a line's request (`batch_req_…`): also the job id and the usage event's request id. */
export function lineRequestId(batchId: string, idx: number, attempt: number): string {
  return `${lineRequestStem(batchId)}${idx}${attempt ? `_${attempt}` : ''}`;
}

/** What every request id of a batch's lines starts with (`batch_req_<batch>_`). */
export const lineRequestStem = (batchId: string): string => `batch_req_${batchId.replace(/^[a-z]+_/, '')}_`;

/** lineRequestId in SQL, of a batch_lines row (its `idx`, `attempt`), the batch's lineRequestStem bound as `:stem`. */
export const LINE_REQUEST_ID_SQL = `:stem || idx || CASE WHEN attempt > 0 THEN '_' || attempt ELSE '' END`;

const NOT_RUN: Record<string, { code: string; message: string }> = {
  expired: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' },
  canceled: { code: 'batch_cancelled', message: 'This request was not executed because the batch was cancelled.' },
};

/** One line of an OpenAI output or error file: `{id, custom_id, response: {status_code, request_id, body}, error}`. */
export function openaiResultLine(batch: BatchRow, l: LineRow): string {
  const id = l.request_id ?? lineRequestId(batch.id, l.idx, l.attempt);
  if (l.state === 'succeeded' || l.state === 'errored') {
    return JSON.stringify({ id, custom_id: l.custom_id, response: { status_code: l.status_code, request_id: l.request_id, body: l.result }, error: null });
  }
  return JSON.stringify({ id, custom_id: l.custom_id, response: null, error: NOT_RUN[l.state] ?? { code: 'batch_line_not_run', message: 'This request was not executed.' } });
}

/** An errored line's `error`: Anthropic's ErrorResponse around the error object the messages endpoint answered. */
function anthropicErrorBody(l: LineRow): unknown {
  const body = l.result as { error?: { type?: string; message?: string } } | null;
  const error = body?.error?.type ? body.error : { type: 'api_error', message: body?.error?.message ?? 'The request failed.' };
  return { type: 'error', error, request_id: l.request_id };
}

/**
 * A succeeded line's message as Anthropic's batch results show it: served on the batch tier,
 * `usage.service_tier: "batch"` (SDK 1.16 Usage.service_tier: "If the request used the priority,
 * standard, or batch tier"), which cost tools read to price it at the batch rate. The line ran as a
 * `POST /v1/messages`, whose answer says `standard` (a translated upstream's) or what an
 * Anthropic-native upstream said of that synchronous call.
 */
function batchTierMessage(message: unknown): unknown {
  if (!isRecord(message) || !isRecord(message.usage)) return message;
  return Object.assign({}, message, { usage: Object.assign({}, message.usage, { service_tier: 'batch' }) });
}

/** One line of a Message Batch's results: `{custom_id, result: {type, message | error}}`. */
export function anthropicResultLine(l: LineRow): string {
  switch (l.state) {
    case 'succeeded':
      return JSON.stringify({ custom_id: l.custom_id, result: { type: 'succeeded', message: batchTierMessage(l.result) } });
    case 'errored':
      return JSON.stringify({ custom_id: l.custom_id, result: { type: 'errored', error: anthropicErrorBody(l) } });
    case 'expired':
      return JSON.stringify({ custom_id: l.custom_id, result: { type: 'expired' } });
    default:
      return JSON.stringify({ custom_id: l.custom_id, result: { type: 'canceled' } });
  }
}
