/**
 * A JSON output format together with citations, refused as Anthropic refuses it, on every upstream
 * (400 `invalid_request_error`, before any lane, upstream call or bill). Anthropic's Citations
 * document ("Citations and structured outputs are incompatible": "If you enable citations on any
 * user-provided document (`document` blocks or `search_result` blocks) and also include the
 * `output_config.format` parameter (or the deprecated `output_format` parameter), the API returns a
 * 400 error") gives no words; its API's are quoted from live probes: "Citations cannot be enabled when
 * output format is set. Please disable citations on uploaded document blocks." (a probe's verbatim
 * `invalid_request_error` answer; several clients quote its first sentence). Before, an Anthropic
 * upstream refused it after a lane was taken, while a translated one served it (the citations
 * dropped, api/dialects/messages/request.ts documentParts).
 *
 * A `document` block with `citations.enabled: true` in a message's content, or in a `tool_result`'s
 * (a document the caller supplies there too), with `output_config.format` or the beta's
 * `output_format` set. `search_result` blocks with citations are not checked: Anthropic's answer for
 * them was not found quoted (its words name document blocks). count_tokens is not checked either
 * (its answer to the pair was not found quoted).
 */
import { ApiError } from '../../../shared/errors/ApiError';
import { isRecord } from '../../../shared/is-record';

type Body = {
  messages: Array<{ content: unknown }>;
  output_config?: { format?: unknown } | null;
  output_format?: unknown;
};

export const CITATIONS_WITH_FORMAT = 'Citations cannot be enabled when output format is set. Please disable citations on uploaded document blocks.';

/** A document block with citations enabled, here or in a tool_result's content. */
function citesDocument(blocks: unknown): boolean {
  if (!Array.isArray(blocks)) return false;
  return blocks.some((b) => isRecord(b) && ((b.type === 'document' && isRecord(b.citations) && b.citations.enabled === true) || (b.type === 'tool_result' && citesDocument(b.content))));
}

/** Refuses an output format with citations enabled on a document (the body is past the messages schema). */
export function refuseCitationsWithFormat(body: Body): void {
  if (body.output_config?.format == null && body.output_format == null) return;
  if (body.messages.some((m) => citesDocument(m.content))) throw new ApiError(400, 'invalid_request', CITATIONS_WITH_FORMAT);
}
