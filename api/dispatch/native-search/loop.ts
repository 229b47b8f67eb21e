import crypto from 'crypto';
import type { Request, Response } from 'express';
import type { AppContext } from '../../context';
import type { ResolvedModel } from '../../../shared/catalog/catalog';
import type { CanonicalCompletion, CanonicalMessage, CanonicalRequest, CanonicalToolCall, CanonicalUsage, FinishReason, ThinkingBlock } from '../../dialects/canonical';
import type { SearchArgs, SearchOutcome } from '../../../shared/search/types';
import { ApiError } from '../../../shared/errors/ApiError';
import { ClientGone } from '../../../shared/errors/ClientGone';
import { dispatchChat } from '../chat';
import { runSearch, searchCaller, queryLengthFits, MAX_QUERY_CHARS } from '../search';
import { hostMatches } from '../../../shared/net/domains';
import { config } from '../../../shared/config/env';
import { NATIVE_NAMES, kindOfName, type NativeKind, type NativeToolSet } from './tools';
import { errorText, fetchText, searchText } from './tool-text';
import { TurnCollector } from './turn-stream';
import { NativeBudget } from './budget';
import { fetchableUrl } from './fetchable';
import { addToRow, addUsageToRow } from '../../middleware/request-log';

export type NativeStep =
  /**
   * The model's reasoning in a turn (chat's `reasoning_content`), before the turn's text and calls;
   * `blocks`: an Anthropic-native upstream's signed thinking blocks of the turn, sent back with it.
   */
  | { type: 'reasoning'; text: string; blocks?: ThinkingBlock[] }
  | { type: 'text'; text: string }
  | { type: 'call'; id: string; kind: NativeKind; input: Record<string, unknown> }
  | { type: 'result'; id: string; kind: NativeKind; outcome?: SearchOutcome; error?: { code: string; message: string } }
  | { type: 'client_calls'; calls: CanonicalToolCall[] };

export interface NativeTranscript {
  steps: NativeStep[];
  usage: Required<Pick<CanonicalUsage, 'prompt_tokens' | 'completion_tokens' | 'total_tokens'>> & { prompt_tokens_details: { cached_tokens: number; cache_write_tokens?: number } };
  finish: FinishReason;
  /**
   * The last turn's refusal: the model's refusal message (OpenAI's `message.refusal`) and the
   * finishing choice's `stop_details` (an Anthropic deployment's, from its adapter), for the messages
   * dialect's `stop_details`; none when the turn refused nothing.
   */
  refusal?: { text: string; stopDetails?: unknown };
  /** Searches and fetches that ran (each is one ledger row). */
  requests: Record<NativeKind, number>;
  /** The assistant and tool messages this request added to the conversation. */
  added: CanonicalMessage[];
}

export type SearchRunner = (args: SearchArgs, signal?: AbortSignal) => Promise<SearchOutcome>;

/** What a native request runs its searches with: the rails, its budget, and the organization its seals are bound to. */
export interface NativeRails {
  run: SearchRunner;
  budget: NativeBudget;
  orgId: string;
}

/**
 * The request's rails: the same gate as the MCP tool (runSearch in api/dispatch/search.ts). Every
 * search or fetch that runs on them, the model's or a re-run of an earlier result, is counted on the
 * request's log row (it has no row of its own).
 */
export function nativeRails(ctx: AppContext, req: Request, set: NativeToolSet): NativeRails {
  const caller = { ...searchCaller(ctx, req), log: undefined };
  let n = 0;
  // Each search is its own job and ledger row: both are keyed by a unique request id.
  const run: SearchRunner = async (args, signal) => {
    const outcome = await runSearch({ ...caller, requestId: `${req.id}.${args.kind}${++n}` }, args, signal);
    if (req.res) addToRow(req.res, { units: { [args.kind === 'search' ? 'web_search_requests' : 'web_fetch_requests']: 1 } });
    return outcome;
  };
  return { run, budget: new NativeBudget(set), orgId: caller.orgId };
}

export const serverToolId = () => `srvtoolu_${crypto.randomBytes(12).toString('hex')}`;

function inputOf(call: CanonicalToolCall): Record<string, unknown> {
  try {
    const v = JSON.parse(call.function.arguments || '{}');
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/** Filters search results by the tool's domain lists (as Anthropic's allowed/blocked_domains do). */
function filtered(o: SearchOutcome, set: NativeToolSet): SearchOutcome {
  if (o.kind !== 'search') return o;
  const t = set.search;
  const keep = (url: string) => {
    let host: string;
    try {
      host = new URL(url).hostname;
    } catch {
      return false;
    }
    if (t?.blockedDomains?.some((d) => hostMatches(host, d))) return false;
    return !t?.allowedDomains?.length || t.allowedDomains.some((d) => hostMatches(host, d));
  };
  return { ...o, results: o.results.filter((r) => keep(r.url)) };
}

/**
 * Runs one search or fetch (the model's call, or a re-run of a result the client did not echo) if
 * the request's budget allows it; refusals and failures come back in-band.
 */
export async function runNativeCall(rails: NativeRails, set: NativeToolSet, kind: NativeKind, input: Record<string, unknown>, signal?: AbortSignal): Promise<{ outcome?: SearchOutcome; error?: { code: string; message: string } }> {
  const refused = rails.budget.take(kind);
  if (refused) return { error: refused };
  let args: SearchArgs;
  if (kind === 'search') {
    const query = typeof input.query === 'string' ? input.query.trim() : '';
    if (!query) return { error: { code: 'invalid_tool_input', message: 'The search needs a query.' } };
    if (!queryLengthFits(query)) return { error: { code: 'query_too_long', message: `The query is longer than ${MAX_QUERY_CHARS} characters.` } };
    args = { kind: 'search', query, ...(set.search?.country ? { country: set.search.country } : {}) };
  } else {
    const url = typeof input.url === 'string' ? input.url.trim() : '';
    if (!url) return { error: { code: 'invalid_tool_input', message: 'The fetch needs a url.' } };
    args = { kind: 'fetch', url, allowedDomains: set.fetch?.allowedDomains, blockedDomains: set.fetch?.blockedDomains };
  }
  try {
    const outcome = filtered(await rails.run(args, signal), set);
    if (outcome.kind === 'fetch' && set.fetch?.maxChars && outcome.content.length > set.fetch.maxChars) {
      return { outcome: { ...outcome, content: outcome.content.slice(0, set.fetch.maxChars) } };
    }
    return { outcome };
  } catch (err) {
    if (signal?.aborted) throw new ClientGone();
    if (err instanceof ApiError) return { error: { code: err.code, message: err.message } };
    throw err;
  }
}

/** The text the model reads for a result step. */
export function resultText(step: Extract<NativeStep, { type: 'result' }>): string {
  if (step.error) return errorText(step.error.code, step.error.message);
  const o = step.outcome!;
  return o.kind === 'search' ? searchText(o) : fetchText(o);
}

export interface NativeLoopInput {
  resolved: ResolvedModel;
  /** The canonical request with the server tools already offered as function tools. */
  canonical: CanonicalRequest;
  tools: NativeToolSet;
  rails: NativeRails;
  /** Each step as it happens (streaming). */
  onStep?: (step: NativeStep) => void;
  /**
   * Streaming: each model turn is streamed from the upstream and its text handed on delta by delta
   * as it arrives; the turn's `text` step follows once the turn is complete (with its citations).
   */
  onText?: (delta: string) => void;
  /** Streaming: each piece of a turn's reasoning as it arrives (its `reasoning` step follows once the turn is complete). */
  onReasoning?: (delta: string) => void;
  /** Streaming: each signed thinking block of a turn once whole (an Anthropic-native upstream's signature_delta). */
  onThinking?: (blocks: ThinkingBlock[]) => void;
  /** Jobs of the request made before the loop (a compaction pass: 1): the first turn's job id and rpm count follow them. */
  jobsBefore?: number;
  /**
   * The Responses API's `max_tool_calls`: at most this many server tool calls (searches and fetches)
   * in the loop. Once they are made the model is offered no server tool (so it answers), and calls of
   * one past the cap in the same turn are ignored (dropped, as OpenAI ignores them).
   */
  maxCalls?: number;
  /** A background response's run: its cancel, and (streamed) no client whose leaving stops it. */
  signal?: AbortSignal;
  detached?: boolean;
  /** Before each later turn (a background run checks that it is still wanted: a cancel from another pod). */
  beforeTurn?: () => Promise<void>;
  /** Runs each turn's dispatch (a background run waits for a lane when its org's are full). */
  admit?: <T>(dispatch: () => Promise<T>) => Promise<T>;
}

/**
 * The bounded native search loop, in the web pod: a model turn through the chat queue; each
 * search or fetch it asks for runs on the rails (max_uses per tool, failures in-band); then the
 * model continues. At most NATIVE_MAX_TURNS model turns; the last one is offered no server tools,
 * so it answers. At most NATIVE_MAX_SEARCHES searches and fetches together, and each tool's own
 * max_uses, re-runs of un-echoed results included (NativeBudget); a call past either gets an in-band
 * max_uses_exceeded result. A call of a client tool ends the loop (the client runs it).
 * Each turn and search is a job with its own usage event (the billing) and no log row: the request's
 * one row, written by the pod when the response closes, carries every turn's tokens and every search
 * (nativeRails counts the searches).
 */
export async function runNativeLoop(ctx: AppContext, req: Request, res: Response, input: NativeLoopInput): Promise<NativeTranscript> {
  const abort = new AbortController();
  const onClose = () => {
    if (!res.writableFinished && !input.detached) abort.abort();
  };
  res.on('close', onClose);
  const onCancel = () => abort.abort(input.signal!.reason);
  input.signal?.addEventListener('abort', onCancel, { once: true });
  const t: NativeTranscript = {
    steps: [],
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, prompt_tokens_details: { cached_tokens: 0 } },
    finish: null,
    requests: { search: 0, fetch: 0 },
    added: [],
  };
  const step = (s: NativeStep) => {
    t.steps.push(s);
    input.onStep?.(s);
  };
  const nativeNames = new Set(Object.values(NATIVE_NAMES));
  let callsMade = 0;
  const callsLeft = () => (input.maxCalls === undefined ? Infinity : Math.max(0, input.maxCalls - callsMade));
  try {
    const maxTurns = config().nativeMaxTurns;
    const before = input.jobsBefore ?? 0;
    for (let turn = 0; turn < maxTurns; turn++) {
      if (turn > 0) await input.beforeTurn?.();
      const last = turn === maxTurns - 1;
      // no server tool call left (max_tool_calls): the server tools are not offered, as on the last turn
      const noServerTools = last || callsLeft() === 0;
      const body: CanonicalRequest = { ...input.canonical, messages: [...input.canonical.messages, ...t.added], stream: false };
      // A choice forcing a server tool applies to the first turn; later the model decides.
      const forced = typeof body.tool_choice === 'object' && body.tool_choice.type === 'function' && nativeNames.has(body.tool_choice.function.name);
      if ((turn > 0 || noServerTools) && forced) body.tool_choice = 'auto';
      if (noServerTools) {
        body.tools = body.tools?.filter((x) => !nativeNames.has(x.function.name));
        const choice = body.tool_choice;
        if (typeof choice === 'object' && choice.type === 'allowed_tools') {
          // the allowed list loses the server tools too; allowing nothing else, no tool may be called
          const kept = choice.allowed_tools.tools.filter((x) => !nativeNames.has(x.function.name));
          body.tool_choice = kept.length ? { type: 'allowed_tools', allowed_tools: { ...choice.allowed_tools, tools: kept } } : 'none';
        }
        if (!body.tools?.length) {
          delete body.tools;
          delete body.tool_choice;
          delete body.parallel_tool_calls;
        }
      }
      const collector = input.onText ? new TurnCollector(input.onText, input.onReasoning, input.onThinking) : undefined;
      const admit = input.admit ?? (<T>(dispatch: () => Promise<T>) => dispatch());
      const result = await admit(() => dispatchChat(ctx, req, res, {
        resolved: input.resolved,
        operation: 'chat',
        body: collector ? { ...body, stream: true } : body,
        stream: !!collector,
        includeUsage: true,
        passthrough: false,
        onChunk: collector ? (d) => collector.push(d) : undefined,
        jobId: turn + before === 0 ? undefined : `${req.id}.t${turn + before}`,
        laterTurn: turn + before > 0,
        partOfRequest: true,
        signal: input.signal,
        detached: input.detached,
      }));
      const c = collector ? collector.completion() : (result as CanonicalCompletion);
      const u = c.usage;
      t.usage.prompt_tokens += u?.prompt_tokens ?? 0;
      t.usage.completion_tokens += u?.completion_tokens ?? 0;
      t.usage.prompt_tokens_details.cached_tokens += u?.prompt_tokens_details?.cached_tokens ?? 0;
      // the turns' cache writes (an Anthropic or Bedrock upstream's), summed once any turn reports some
      const written = u?.prompt_tokens_details?.cache_write_tokens;
      if (written) t.usage.prompt_tokens_details.cache_write_tokens = (t.usage.prompt_tokens_details.cache_write_tokens ?? 0) + written;
      t.usage.total_tokens = t.usage.prompt_tokens + t.usage.completion_tokens;
      addUsageToRow(res, u);
      const choice = c.choices[0];
      const text = choice?.message.content ?? '';
      const reasoning = choice?.message.reasoning_content ?? '';
      const blocks = choice?.message.thinking_blocks ?? [];
      const calls = choice?.message.tool_calls ?? [];
      const native = noServerTools ? [] : calls.filter((x) => kindOfName(x.function.name, input.tools)).slice(0, callsLeft());
      callsMade += native.length;
      const client = calls.filter((x) => !kindOfName(x.function.name, input.tools));
      t.finish = choice?.finish_reason ?? 'stop';
      const refused = choice?.message.refusal ?? '';
      const stopDetails = (choice as { stop_details?: unknown } | undefined)?.stop_details;
      t.refusal = refused || stopDetails !== undefined ? { text: refused, stopDetails } : undefined;
      if (reasoning || blocks.length) step({ type: 'reasoning', text: reasoning, ...(blocks.length ? { blocks } : {}) });
      if (text) step({ type: 'text', text });
      // Server calls get the gateway's own ids (models reuse ids across turns).
      const renamed = native.map((x) => ({ ...x, id: serverToolId() }));
      if (text || renamed.length || client.length) {
        // the turn's signed thinking goes back with it: Anthropic refuses a tool-using turn with thinking on without it
        t.added.push({ role: 'assistant', content: text || null, ...(blocks.length ? { thinking_blocks: blocks } : {}), ...(renamed.length || client.length ? { tool_calls: [...renamed, ...client] } : {}) });
      }
      for (const call of renamed) {
        const kind = kindOfName(call.function.name, input.tools)!;
        const args = inputOf(call);
        step({ type: 'call', id: call.id, kind, input: args });
        const url = kind === 'fetch' && typeof args.url === 'string' ? args.url.trim() : '';
        const r = url && !fetchableUrl(url, [...input.canonical.messages, ...t.added])
          ? { error: { code: 'fetch_not_allowed', message: 'Only a URL the conversation gave (the user, a search or a fetch result) can be fetched.' } }
          : await runNativeCall(input.rails, input.tools, kind, args, abort.signal);
        if (r.outcome) t.requests[kind]++;
        const result: Extract<NativeStep, { type: 'result' }> = { type: 'result', id: call.id, kind, ...r };
        step(result);
        t.added.push({ role: 'tool', tool_call_id: call.id, content: resultText(result) });
      }
      if (client.length) {
        step({ type: 'client_calls', calls: client });
        t.finish = 'tool_calls';
        break;
      }
      if (!renamed.length) {
        if (t.finish === 'tool_calls') t.finish = 'stop'; // only dropped server calls on the last turn
        break;
      }
    }
  } finally {
    res.off('close', onClose);
    input.signal?.removeEventListener('abort', onCancel);
  }
  return t;
}
