import type { CanonicalUsage } from '../../dialects/canonical';
import { compactionBlock, iterationUsage } from '../../dialects/messages/compaction';
import { messageId, messagesUsage } from '../../dialects/messages/response';

/** A compaction made inside a messages request: its summary and the summary pass's usage. */
export interface MessagesCompaction {
  summary: string;
  usage: CanonicalUsage | undefined;
}

/**
 * The answer after a compaction: its compaction block first, and `usage.iterations` with the summary
 * pass and the answer (the top-level usage is the answer's alone, as Anthropic reports it).
 */
export function withCompaction(message: Record<string, unknown>, c: MessagesCompaction, answer: CanonicalUsage | undefined, publicModel: string): Record<string, unknown> {
  (message.content as unknown[]).unshift(compactionBlock(c.summary));
  Object.assign(message.usage as object, { iterations: [iterationUsage('compaction', c.usage, publicModel), iterationUsage('message', answer, publicModel)] });
  return message;
}

/** The answer of `pause_after_compaction`: the compaction block alone, stop reason `compaction`, no tokens of its own. */
export function pausedAnswer(c: MessagesCompaction, publicModel: string, contextManagement?: { applied_edits: unknown[] }): Record<string, unknown> {
  return {
    id: messageId(),
    type: 'message',
    role: 'assistant',
    model: publicModel,
    content: [compactionBlock(c.summary)],
    stop_reason: 'compaction',
    stop_sequence: null,
    usage: Object.assign(messagesUsage(undefined), { iterations: [iterationUsage('compaction', c.usage, publicModel)] }),
    ...(contextManagement ? { context_management: contextManagement } : {}),
  };
}
