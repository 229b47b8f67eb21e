import type { Request, Response } from 'express';
import type { AppContext } from '../context';
import { errors } from '../../shared/errors/codes';
import { dispatchChat, type resolveChatModel } from './chat';
import { canonicalText, instructionsEnd, type CanonicalCompletion, type CanonicalMessage, type CanonicalRequest, type CanonicalUsage } from '../dialects/canonical';
import { addUsageToRow } from '../middleware/request-log';

/**
 * The summary pass of a compaction (OpenAI's `/responses/compact` and server-side compaction,
 * api/routes/responses/; Anthropic's `compact_20260112`, api/routes/messages/compaction.ts): the model
 * is asked, after the conversation, for a summary that replaces it.
 */

/** What the model is asked, after the conversation, to make the summary that replaces it. */
export const COMPACTION_PROMPT =
  'You are performing a CONTEXT CHECKPOINT COMPACTION. Write a handoff summary of the conversation above for yourself, so that you can ' +
  'continue it without it: the goal, the decisions made, the current state of the work, what remains to do, and every detail needed to go ' +
  'on (names, numbers, file paths, code, commands, open questions). Answer with the summary only.';

/** How an opened compaction reaches the model: a user message starting with this, then the summary. */
export const SUMMARY_PREFIX = 'Summary of the earlier conversation (a context checkpoint):\n\n';

/** The user message an opened compaction becomes. */
export const summaryMessage = (summary: string): CanonicalMessage => ({ role: 'user', content: SUMMARY_PREFIX + summary });

/** Whether a message is an opened compaction's summary. */
export const isSummaryMessage = (m: CanonicalMessage): boolean => canonicalText(m.content).startsWith(SUMMARY_PREFIX);

/** How the summary pass runs: as a part of a request that makes more than one; its prompt; a background response's cancel and detachment (dispatchChat's). */
export interface SummaryJob {
  partOfRequest?: boolean;
  /** Replaces COMPACTION_PROMPT (Anthropic's `instructions`). */
  prompt?: string;
  signal?: AbortSignal;
  detached?: boolean;
}

/**
 * The model's summary of a canonical conversation (COMPACTION_PROMPT, or `job.prompt`, after it), as a synchronous chat
 * request of the caller's (lane, limits, usage, billed); `job`: the dispatch's part of a request that
 * makes more than one (server-side compaction). The canonical request is left as it was.
 */
export async function summarise(ctx: AppContext, req: Request, res: Response, resolved: Awaited<ReturnType<typeof resolveChatModel>>, canonical: CanonicalRequest, job: SummaryJob): Promise<{ summary: string; usage: CanonicalUsage | undefined }> {
  const asked: CanonicalRequest = Object.assign({}, canonical, { messages: [...canonical.messages, { role: 'user' as const, content: job.prompt ?? COMPACTION_PROMPT }] });
  // the request's tools stay offered (the conversation's calls refer to them), but the pass answers with text:
  // not in the request's structured output format either (a JSON object of its schema is no summary)
  if (asked.tools?.length) asked.tool_choice = 'none';
  delete asked.response_format;
  const result = (await dispatchChat(ctx, req, res, { resolved, operation: 'chat', body: asked as unknown as Record<string, unknown>, stream: false, includeUsage: true, passthrough: false, partOfRequest: job.partOfRequest, signal: job.signal, detached: job.detached })) as CanonicalCompletion;
  const summary = result.choices?.[0]?.message?.content;
  if (!summary) throw errors.upstreamError('The model answered the compaction with no summary.');
  return { summary, usage: result.usage };
}

/**
 * A server-side compaction inside a request (OpenAI's, Anthropic's): the summary pass as a part of the
 * request (billed, its tokens on the request's row), then the conversation after the leading
 * instructions is replaced, in place, by what `keep` keeps of it and the summary.
 */
export async function compactInPlace(
  ctx: AppContext,
  req: Request,
  res: Response,
  resolved: Awaited<ReturnType<typeof resolveChatModel>>,
  canonical: CanonicalRequest,
  keep: (conversation: CanonicalMessage[]) => CanonicalMessage[],
  job: Omit<SummaryJob, 'partOfRequest'> = {},
): Promise<{ summary: string; usage: CanonicalUsage | undefined; context: CanonicalMessage[] }> {
  const { summary, usage } = await summarise(ctx, req, res, resolved, canonical, Object.assign({ partOfRequest: true }, job));
  addUsageToRow(res, usage);
  const lead = instructionsEnd(canonical.messages);
  const context = [...keep(canonical.messages.slice(lead)), summaryMessage(summary)];
  canonical.messages = [...canonical.messages.slice(0, lead), ...context];
  return { summary, usage, context };
}

/** The answer's job after a compaction pass: the request's second job, not another request for rpm, its tokens on the request's row (addToRow). */
export const afterCompaction = (req: Request) => ({ jobId: `${req.id}.t1`, laterTurn: true, partOfRequest: true });
