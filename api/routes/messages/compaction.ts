import type { Request, Response } from 'express';
import type { AppContext } from '../../context';
import type { CanonicalRequest, CanonicalUsage } from '../../dialects/canonical';
import type { ResolvedModel } from '../../../shared/catalog/catalog';
import { countCanonicalTokens } from '../../dialects/responses/count-tokens';
import { compactInPlace } from '../../dispatch/summarise';
import type { CompactEdit } from '../../dialects/messages/compaction';
import { compactionBlock, compactionIterations } from '../../dialects/messages/compaction';
import { PAUSED_STOP, anthropicMessage, messageId, messagesUsage } from '../../dialects/messages/response';

/** A compaction made inside a messages request: its summary and the summary pass's usage. */
export interface MessagesCompaction {
  summary: string;
  usage: CanonicalUsage | undefined;
}

/**
 * Anthropic's `compact_20260112` on a translated upstream (or before the gateway's search loop), when
 * asked and due: the input (counted as count_tokens counts it, after any tool result clearing) reaches
 * the trigger. The summary pass is a billed part of the request (the edit's `instructions` its prompt),
 * and the request then goes on from the system prompt and the summary (`canonical` changed in place).
 */
export async function compactionIfDue(ctx: AppContext, req: Request, res: Response, resolved: ResolvedModel, canonical: CanonicalRequest, edit: CompactEdit | undefined): Promise<MessagesCompaction | undefined> {
  if (!edit || (await countCanonicalTokens(resolved.model.tokenizer, canonical, true)) < edit.trigger) return undefined;
  return compactInPlace(ctx, req, res, resolved, canonical, () => [], { prompt: edit.instructions });
}

/**
 * The answer after a compaction: its compaction block first, and `usage.iterations` with the summary
 * pass and the answer (the top-level usage is the answer's alone, as Anthropic reports it).
 */
export function withCompaction(message: Record<string, unknown>, c: MessagesCompaction, answer: CanonicalUsage | undefined, publicModel: string): Record<string, unknown> {
  (message.content as unknown[]).unshift(compactionBlock(c.summary));
  Object.assign(message.usage as object, { iterations: compactionIterations(c.usage, answer, publicModel) });
  return message;
}

/** The answer of `pause_after_compaction`: the compaction block alone, stop reason `compaction`, no tokens of its own. */
export function pausedAnswer(c: MessagesCompaction, publicModel: string, contextManagement?: { applied_edits: unknown[] }): Record<string, unknown> {
  const usage = Object.assign(messagesUsage(undefined), { iterations: compactionIterations(c.usage, undefined, publicModel, true) });
  const message = anthropicMessage(messageId(), publicModel, [compactionBlock(c.summary)], PAUSED_STOP, usage);
  if (contextManagement) message.context_management = contextManagement;
  return message;
}
