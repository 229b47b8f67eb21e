import type { MessagesBlock, MessagesMessage, MessagesRequest } from './request';
import type { NativeRails, NativeStep, NativeTranscript } from '../../dispatch/native-search/loop';
import { runNativeCall, resultText } from '../../dispatch/native-search/loop';
import { functionTools, locationCountry, NATIVE_NAMES, type NativeKind, type NativeToolSet } from '../../dispatch/native-search/tools';
import { openResult, sealIndex, sealResult } from '../../dispatch/native-search/seal';
import { citedDocuments, citedSources, fetchedBefore, resultsBefore } from '../../dispatch/native-search/citations';
import { errorText, fetchText, searchText } from '../../dispatch/native-search/tool-text';
import { anthropicMessage, anthropicToolId, messagesUsage, refusalDetails, stopOf, type MessagesUsage } from './response';

type Tool = NonNullable<MessagesRequest['tools']>[number];

const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);

/**
 * Anthropic's server tools the gateway runs: `web_search_*` and `web_fetch_*` (`web_fetch_20250910`,
 * and SDK 1.16's `web_fetch_20260209`, `_20260309`, `_20260318`, the same tool with the same fields
 * the gateway reads; before, only the first was run here, so a newer one reached an Anthropic-native
 * upstream, which fetched past the organization's search entitlement and ledger, and a translated
 * upstream refused it 400 `unsupported_tool`).
 */
export const ANTHROPIC_FETCH_TOOL = /^web_fetch_\d{8}$/;

export function messagesNativeTools(req: MessagesRequest): { set: NativeToolSet; rest: Tool[] } {
  const set: NativeToolSet = {};
  const rest: Tool[] = [];
  for (const t of req.tools ?? []) {
    const r = t as Tool & Record<string, unknown>;
    const kind: NativeKind | undefined = /^web_search_\d{8}$/.test(String(t.type)) ? 'search' : ANTHROPIC_FETCH_TOOL.test(String(t.type)) ? 'fetch' : undefined;
    if (!kind) {
      rest.push(t);
      continue;
    }
    set[kind] = {
      kind,
      maxUses: typeof r.max_uses === 'number' ? r.max_uses : undefined,
      allowedDomains: strings(r.allowed_domains),
      blockedDomains: strings(r.blocked_domains),
      maxChars: typeof r.max_content_tokens === 'number' ? r.max_content_tokens * 4 : undefined,
      country: kind === 'search' ? locationCountry(r.user_location) : undefined,
    };
  }
  return { set, rest };
}

/** The gateway's in-band codes → Anthropic's `error_code` values (the gateway's code rides along as `code`). */
export function anthropicToolErrorCode(kind: NativeKind, code: string): string {
  const common: Record<string, string> = { quota_exceeded: 'too_many_requests', budget_exceeded: 'too_many_requests', max_uses_exceeded: 'max_uses_exceeded', invalid_tool_input: 'invalid_tool_input' };
  const fetch: Record<string, string> = { fetch_not_allowed: 'url_not_allowed', fetch_failed: 'url_not_accessible', unsupported_content_type: 'unsupported_content_type', fetch_too_large: 'content_too_large' };
  return common[code] ?? (kind === 'fetch' ? fetch[code] : code === 'query_too_long' ? code : undefined) ?? 'unavailable';
}

/** A server block echoed by the client → the model-facing text, or undefined when it must be re-run (no seal of this org). */
function echoedText(kind: NativeKind, result: MessagesBlock | undefined, input: Record<string, unknown>, orgId: string): string | undefined {
  if (!result) return undefined;
  const c = result.content as Record<string, unknown> | Array<Record<string, unknown>> | undefined;
  if (c && !Array.isArray(c) && typeof c.error_code === 'string') return errorText(String(c.code ?? c.error_code), 'The earlier call failed.');
  if (kind === 'search') {
    if (!Array.isArray(c)) return undefined;
    const opened = c.map((x) => openResult(x.encrypted_content, orgId));
    if (opened.some((x) => !x)) return undefined;
    return searchText({ query: String(input.query ?? opened[0]?.query ?? ''), provider: opened[0]?.provider ?? '', results: opened.map((x) => x!.item) });
  }
  const doc = (c as { content?: { source?: { data?: unknown }; title?: unknown } } | undefined)?.content;
  if (typeof doc?.source?.data !== 'string') return undefined;
  return fetchText({ url: String((c as { url?: unknown }).url ?? input.url ?? ''), title: typeof doc.title === 'string' ? doc.title : undefined, content: doc.source.data });
}

/**
 * An echoed conversation → one the translated path understands: each `server_tool_use` becomes a
 * tool_use and its result a tool_result (from the sealed `encrypted_content`, or from the echoed page
 * text). A result not echoed, or not openable (another organization's seal), is re-run on the rails
 * and billed normally, within the request's budget (max_uses, NATIVE_MAX_SEARCHES).
 */
export async function unfoldServerBlocks(req: MessagesRequest, set: NativeToolSet, rails: NativeRails, signal: AbortSignal): Promise<{ messages: MessagesMessage[]; reruns: Record<NativeKind, number> }> {
  const reruns = { search: 0, fetch: 0 };
  const out: MessagesMessage[] = [];
  for (const m of req.messages) {
    if (m.role !== 'assistant' || typeof m.content === 'string' || !m.content.some((b) => b.type === 'server_tool_use')) {
      out.push(m);
      continue;
    }
    let blocks: MessagesBlock[] = [];
    const results = new Map(m.content.filter((b) => /_tool_result$/.test(b.type)).map((b) => [String(b.tool_use_id), b]));
    for (const b of m.content) {
      if (b.type !== 'server_tool_use') {
        if (!/_tool_result$/.test(b.type) || b.type === 'tool_result') blocks.push(b.type === 'text' ? { type: 'text', text: b.text } : b);
        continue;
      }
      const kind: NativeKind = b.name === NATIVE_NAMES.fetch ? 'fetch' : 'search';
      const input = (b.input ?? {}) as Record<string, unknown>;
      let text = echoedText(kind, results.get(String(b.id)), input, rails.orgId);
      if (text === undefined) {
        const r = await runNativeCall(rails, set, kind, input, signal);
        if (r.outcome) reruns[kind]++;
        text = resultText({ type: 'result', id: String(b.id), kind, ...r });
      }
      blocks.push({ type: 'tool_use', id: String(b.id), name: String(b.name), input });
      out.push({ role: 'assistant', content: blocks });
      out.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: String(b.id), content: text }] });
      blocks = [];
    }
    if (blocks.length) out.push({ role: 'assistant', content: blocks });
  }
  return { messages: out, reruns };
}

/** The request the translated path runs: server tools offered as custom tools, server blocks unfolded. */
export function withFunctionTools(req: MessagesRequest, rest: Tool[], set: NativeToolSet, messages: MessagesMessage[]): MessagesRequest {
  const custom = functionTools(set).map((f) => ({ name: f.function.name, description: f.function.description, input_schema: f.function.parameters }));
  return { ...req, messages, tools: [...rest, ...custom] };
}

/** One transcript step → its Anthropic content block (client calls give several); seals are bound to `orgId`. */
export function stepBlocks(steps: NativeStep[], i: number, orgId: string): Array<Record<string, unknown>> {
  const s = steps[i];
  switch (s.type) {
    case 'reasoning':
      // an Anthropic-native upstream's signed blocks, as it sent them (the client sends them back); unsigned reasoning has no block
      return s.blocks ?? [];
    case 'text': {
      const cited = citedSources(s.text, resultsBefore(steps, i));
      const fromSearch = cited.map((c) => ({ at: c.start, citation: { type: 'web_search_result_location', url: c.url, title: c.title, encrypted_index: sealIndex(orgId, c.url, i), cited_text: c.snippet.slice(0, 150) } }));
      // A fetched page is a document: Anthropic's char_location names the span of it the text uses.
      const fromFetch = citedDocuments(s.text, fetchedBefore(steps, i)).map((c) => ({
        at: c.start,
        citation: { type: 'char_location', cited_text: c.doc.content.slice(c.charStart, c.charEnd), document_index: c.index, document_title: c.doc.title, start_char_index: c.charStart, end_char_index: c.charEnd, file_id: null },
      }));
      const citations = [...fromSearch, ...fromFetch].sort((a, b) => a.at - b.at).map((x) => x.citation);
      return [{ type: 'text', text: s.text, ...(citations.length ? { citations } : {}) }];
    }
    case 'call':
      return [{ type: 'server_tool_use', id: s.id, name: NATIVE_NAMES[s.kind], input: s.input }];
    case 'result': {
      const type = s.kind === 'search' ? 'web_search_tool_result' : 'web_fetch_tool_result';
      if (s.error) {
        const errType = s.kind === 'search' ? 'web_search_tool_result_error' : 'web_fetch_tool_result_error';
        return [{ type, tool_use_id: s.id, content: { type: errType, error_code: anthropicToolErrorCode(s.kind, s.error.code), code: s.error.code } }];
      }
      const o = s.outcome!;
      if (o.kind === 'search') {
        const content = o.results.map((r) => ({ type: 'web_search_result', url: r.url, title: r.title, encrypted_content: sealResult(orgId, o.query, o.provider, r), page_age: r.published_date ?? null }));
        return [{ type, tool_use_id: s.id, content }];
      }
      const doc = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: o.content }, title: o.title ?? null, citations: null };
      return [{ type, tool_use_id: s.id, content: { type: 'web_fetch_result', url: o.url, content: doc, retrieved_at: o.retrievedAt ?? null } }];
    }
    case 'client_calls':
      // an id Anthropic would refuse back (or none) becomes one of the gateway's (response.ts anthropicToolId)
      return s.calls.map((c) => ({ type: 'tool_use', id: anthropicToolId(c.id), name: c.function.name, input: safeJson(c.function.arguments) }));
  }
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s || '{}');
  } catch {
    return {};
  }
}

/** Usage with Anthropic's server tool counters. */
export function nativeUsage(t: NativeTranscript, reruns: Record<NativeKind, number>): MessagesUsage {
  const u = messagesUsage(t.usage);
  u.server_tool_use = { web_search_requests: t.requests.search + reruns.search, web_fetch_requests: t.requests.fetch + reruns.fetch };
  return u;
}

/**
 * The loop's stop reason, answered as the translated path answers it (response.ts stopOf): a refusal
 * (the last turn's refusal message, or a `content_filter` finish) is `refusal` with its `stop_details`
 * (refusalDetails: an Anthropic deployment's own, else the message as its explanation). Before, an
 * OpenAI refusal in the loop was `end_turn` with its message lost, and a refusal had no stop_details.
 */
export function nativeStop(t: NativeTranscript): ReturnType<typeof stopOf> {
  const text = t.refusal?.text ?? '';
  return stopOf(t.finish, false, null, text !== '', false, refusalDetails({ stop_details: t.refusal?.stopDetails }, text));
}

/** The whole transcript as an Anthropic Message; a refusal message is its last text block, as on the translated path. */
export function transcriptToMessage(t: NativeTranscript, reruns: Record<NativeKind, number>, publicModel: string, id: string, orgId: string): Record<string, unknown> {
  const content = t.steps.flatMap((_, i) => stepBlocks(t.steps, i, orgId));
  if (t.refusal?.text) content.push({ type: 'text', text: t.refusal.text });
  return anthropicMessage(id, publicModel, content, nativeStop(t), nativeUsage(t, reruns));
}
