import { ApiError } from '../../../shared/errors/ApiError';
import type { CanonicalUsage } from '../canonical';
import { SUMMARY_PREFIX } from '../../dispatch/summarise';
import type { MessagesBlock, MessagesMessage } from './request';
import { messagesUsage } from './response';

/**
 * Anthropic's server-side compaction (`context_management.edits: [{type: "compact_20260112"}]`, beta
 * `compact-2026-01-12`) on a translated upstream: when the request's input reaches the trigger, the
 * conversation is summarised and the answer goes on from the summary; the answer opens with a
 * `compaction` block (BetaCompactionBlock) that the client sends back, and a later request's messages
 * before that block are dropped for its summary (`fromLastCompaction`).
 */
export interface CompactEdit {
  /** Input tokens at which the conversation is compacted (default 150,000, at least 50,000). */
  trigger: number;
  /** Replaces the summary pass's prompt. */
  instructions?: string;
  /** Answer the compaction block alone (`stop_reason: "compaction"`), the client continues. */
  pause: boolean;
}

const DEFAULT_TRIGGER = 150_000;
const MIN_TRIGGER = 50_000;

const invalid = (message: string, param = 'context_management') => new ApiError(400, 'invalid_request', message, { param });

/** The request's `compact_20260112` edit, checked (400 when malformed); undefined when it asks for none. */
export function compactEditOf(body: object): CompactEdit | undefined {
  const edits = ((body as { context_management?: { edits?: unknown } | null }).context_management?.edits ?? []) as Array<Record<string, unknown>>;
  if (!Array.isArray(edits)) return undefined; // contextEditsOf refuses it
  const asked = edits.filter((e) => e?.type === 'compact_20260112');
  if (!asked.length) return undefined;
  if (asked.length > 1) throw invalid("context_management: at most one 'compact_20260112' edit.");
  const e = asked[0];
  const t = e.trigger as { type?: unknown; value?: unknown } | null | undefined;
  if (t !== undefined && t !== null && (t.type !== 'input_tokens' || !Number.isInteger(t.value) || (t.value as number) < MIN_TRIGGER)) {
    throw invalid(`context_management: a compact_20260112 edit's 'trigger' must be {type: 'input_tokens', value: a whole number of at least ${MIN_TRIGGER}}.`);
  }
  if (e.instructions !== undefined && e.instructions !== null && typeof e.instructions !== 'string') throw invalid("context_management: 'instructions' must be a string.");
  if (e.pause_after_compaction !== undefined && e.pause_after_compaction !== null && typeof e.pause_after_compaction !== 'boolean') {
    throw invalid("context_management: 'pause_after_compaction' must be a boolean.");
  }
  const instructions = typeof e.instructions === 'string' && e.instructions.trim() ? e.instructions : undefined;
  return { trigger: (t?.value as number | undefined) ?? DEFAULT_TRIGGER, instructions, pause: e.pause_after_compaction === true };
}

/**
 * The conversation a request sends, from its latest `compaction` block on: the turns before the
 * assistant turn holding it, and that turn's blocks before it, are dropped, and its summary comes
 * first as a user turn. A block with null `content` (a compaction that failed) changes nothing; one
 * with empty content is refused, as Anthropic does.
 */
export function fromLastCompaction(messages: MessagesMessage[]): MessagesMessage[] {
  let at = -1;
  let block = -1;
  messages.forEach((m, i) => {
    if (typeof m.content === 'string') return;
    m.content.forEach((b, j) => {
      if (b.type !== 'compaction') return;
      if (b.content === '') throw invalid(`messages.${i}.content.${j}: a compaction block's content must be non-empty (null for a failed compaction).`, `messages[${i}].content[${j}].content`);
      if (typeof b.content === 'string' && m.role === 'assistant') [at, block] = [i, j];
    });
  });
  if (at < 0) return messages;
  const holder = messages[at].content as MessagesBlock[];
  const after = holder.slice(block + 1);
  const summary: MessagesMessage = { role: 'user', content: SUMMARY_PREFIX + String(holder[block].content) };
  // system messages join the system prompt wherever they are (systemText reads them from the request)
  return [summary, ...(after.length ? [{ role: 'assistant' as const, content: after }] : []), ...messages.slice(at + 1)];
}

/** The `compaction` block of an answer (BetaCompactionBlock): the summary; nothing encrypted, no signature. */
export const compactionBlock = (summary: string) => ({ type: 'compaction' as const, content: summary, encrypted_content: null });

/** A streamed compaction block: its start (no content yet) and its one delta, which carries the whole summary (BetaCompactionContentBlockDelta). */
export const COMPACTION_START = { type: 'compaction', content: null, encrypted_content: null };
export const compactionDelta = (summary: string) => ({ type: 'compaction_delta', content: summary, encrypted_content: null });

/**
 * `usage.iterations` of an answer that opened with a compaction: the summary pass, then the answer
 * (none when it paused after the compaction, `paused`).
 */
export function compactionIterations(summary: CanonicalUsage | null | undefined, answer: CanonicalUsage | null | undefined, model: string, paused = false): Array<Record<string, unknown>> {
  return [iterationUsage('compaction', summary, model), ...(paused ? [] : [iterationUsage('message', answer, model)])];
}

/** One entry of `usage.iterations` (BetaCompactionIterationUsage, BetaMessageIterationUsage). */
function iterationUsage(type: 'compaction' | 'message', u: CanonicalUsage | null | undefined, model: string): Record<string, unknown> {
  const m = messagesUsage(u);
  const entry: Record<string, unknown> = {
    type,
    input_tokens: m.input_tokens,
    output_tokens: m.output_tokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: m.cache_read_input_tokens,
    cache_creation: null,
  };
  if (type === 'message') entry.model = model;
  return entry;
}
