import type { Request, Response } from 'express';
import type { AppContext } from '../../context';
import { ApiError } from '../../../shared/errors/ApiError';
import type { CanonicalMessage, CanonicalRequest, CanonicalUsage } from '../../dialects/canonical';
import type { ResponsesRequest } from '../../dialects/responses/request';
import { countCanonicalTokens } from '../../dialects/responses/count-tokens';
import type { resolveChatModel } from '../../dispatch/chat';
import { compactionItem, keptUserMessages } from './compact';
import { compactInPlace, type SummaryJob } from '../../dispatch/summarise';

/** What a request asks of server-side compaction: a threshold (`context_management`), and/or a `compaction_trigger` item that forces it. */
export interface CompactionAsk {
  threshold: number | undefined;
  forced: boolean;
}

/** A compaction made inside a response: its output item, the summary pass's usage, and the context that replaced the conversation. */
export interface ServerCompaction {
  item: Record<string, unknown>;
  usage: CanonicalUsage | undefined;
  /** The conversation after compaction (its user messages, then the summary): what the answer continues and what a follow-up continues from. */
  context: CanonicalMessage[];
}

const invalid = (message: string, param: string) => new ApiError(400, 'invalid_request', message, { param });

/**
 * OpenAI's server-side compaction, asked by `context_management: [{type: "compaction", compact_threshold}]`
 * (a threshold of 1,000 tokens or more; none given: the model's context window) or by a
 * `compaction_trigger` input item, which must be the last. Returns the ask and the request without the
 * trigger item (it is no message); undefined when nothing is asked.
 */
export function compactionAsked(body: ResponsesRequest): { ask: CompactionAsk; body: ResponsesRequest } | undefined {
  const entries = (body as { context_management?: unknown }).context_management;
  let threshold: number | undefined;
  let listed = false;
  if (entries !== undefined && entries !== null) {
    if (!Array.isArray(entries) || !entries.length) throw invalid("'context_management' must be a non-empty array.", 'context_management');
    for (const [i, e] of entries.entries()) {
      const entry = e as { type?: unknown; compact_threshold?: unknown } | null;
      if (entry?.type !== 'compaction') throw invalid(`'context_management[${i}].type' must be 'compaction'.`, `context_management[${i}].type`);
      const t = entry.compact_threshold;
      if (t !== undefined && t !== null && (!Number.isInteger(t) || (t as number) < 1000)) {
        throw invalid(`'context_management[${i}].compact_threshold' must be an integer of at least 1000.`, `context_management[${i}].compact_threshold`);
      }
      listed = true;
      if (typeof t === 'number') threshold = threshold === undefined ? t : Math.min(threshold, t);
    }
  }
  const input = Array.isArray(body.input) ? body.input : undefined;
  const at = input?.findIndex((i) => i?.type === 'compaction_trigger') ?? -1;
  if (at >= 0 && at !== input!.length - 1) throw invalid('A compaction_trigger item must be the final input item.', `input[${at}]`);
  if (!listed && at < 0) return undefined;
  const rest = at >= 0 ? Object.assign({}, body, { input: input!.slice(0, -1) }) : body;
  if (at >= 0 && !rest.input.length && !body.previous_response_id && !body.conversation) throw invalid('Nothing to compact before the compaction_trigger item.', 'input');
  return { ask: { threshold, forced: at >= 0 }, body: rest };
}

/**
 * Compacts the conversation before the answer when asked and due (forced, or its input tokens, counted
 * as `input_tokens` counts them, at or above the threshold): the model summarises it (a billed pass of
 * the request's own, before the answer), and the request then sends its leading instructions, the
 * conversation's user messages and the summary in place of the conversation. The Response's output
 * opens with the `compaction` item. Undefined when not due; `canonical` is changed in place when it is.
 */
export async function compactIfDue(
  ctx: AppContext,
  req: Request,
  res: Response,
  resolved: Awaited<ReturnType<typeof resolveChatModel>>,
  canonical: CanonicalRequest,
  ask: CompactionAsk,
  /** A background response's cancel and detachment (background.ts). */
  job: Pick<SummaryJob, 'signal' | 'detached'> = {},
): Promise<ServerCompaction | undefined> {
  const threshold = ask.threshold ?? resolved.model.contextWindow;
  if (!ask.forced && (!threshold || (await countCanonicalTokens(resolved.model.tokenizer, canonical, true)) < threshold)) return undefined;
  const { summary, usage, context } = await compactInPlace(ctx, req, res, resolved, canonical, keptUserMessages, job);
  return { item: compactionItem(req.auth!.orgId, summary), usage, context };
}

/** What runs before a response's answer (server-side compaction, then truncation): its compaction, if one was made. */
export type Prepare = (job: Pick<SummaryJob, 'signal' | 'detached'>) => Promise<ServerCompaction | undefined>;
