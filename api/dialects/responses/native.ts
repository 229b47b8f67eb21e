import type { ResponsesItem, ResponsesRequest } from './request';
import type { NativeRails, NativeStep, NativeTranscript } from '../../dispatch/native-search/loop';
import { runNativeCall, resultText } from '../../dispatch/native-search/loop';
import { functionTools, locationCountry, NATIVE_NAMES, type NativeToolSet } from '../../dispatch/native-search/tools';
import { openPage, openResults, sealPage, sealResults } from '../../dispatch/native-search/seal';
import { citedDocuments, citedSources, fetchedBefore, resultsBefore } from '../../dispatch/native-search/citations';
import { fetchText, searchText } from '../../dispatch/native-search/tool-text';
import { functionCallItem, messageItem, newId, outputText, reasoningItem, type OutputItem } from './response';

type Tool = NonNullable<ResponsesRequest['tools']>[number];

/**
 * OpenAI's hosted search tools (`web_search`, `web_search_preview`, dated variants): the gateway
 * runs them. Like OpenAI's, the tool can also open a page (a fetch, action `open_page`).
 */
export function responsesNativeTools(req: ResponsesRequest): { set: NativeToolSet; rest: Tool[] } {
  const set: NativeToolSet = {};
  const rest: Tool[] = [];
  for (const t of req.tools ?? []) {
    if (!/^web_search/.test(t.type)) {
      rest.push(t);
      continue;
    }
    const allowed = (t.filters as { allowed_domains?: unknown } | null | undefined)?.allowed_domains;
    const allowedDomains = Array.isArray(allowed) ? allowed.filter((d): d is string => typeof d === 'string') : undefined;
    set.search = { kind: 'search', allowedDomains, country: locationCountry((t as { user_location?: unknown }).user_location) };
    // `external_web_access: false` (Codex's default) asks for indexed results only: no live page opening.
    if ((t as { external_web_access?: unknown }).external_web_access !== false) set.fetch = { kind: 'fetch', allowedDomains };
  }
  return { set, rest };
}

/**
 * The request the translated path runs: hosted search offered as a function tool, a forced
 * `{type:'web_search…'}` choice forcing it, and echoed `web_search_call` items turned into a
 * function call and its output: from the sealed `encrypted_content` (this organization's), or
 * re-run without it (billed, and counted on the request's row by the rails, within the request's
 * NATIVE_MAX_SEARCHES).
 */
export async function unfoldSearchCalls(req: ResponsesRequest, rest: Tool[], set: NativeToolSet, rails: NativeRails, signal: AbortSignal): Promise<ResponsesRequest> {
  let input = req.input;
  if (Array.isArray(input)) {
    const out: ResponsesItem[] = [];
    for (const item of input) {
      if (item.type !== 'web_search_call') {
        out.push(item);
        continue;
      }
      const action = (item.action ?? {}) as { type?: unknown; query?: unknown; url?: unknown };
      const callId = String(item.id ?? newId('ws'));
      if (action.type === 'open_page') {
        const url = String(action.url ?? '');
        const page = openPage(item.encrypted_content, rails.orgId);
        let text: string;
        if (page) text = fetchText(page);
        else {
          const r = await runNativeCall(rails, set, 'fetch', { url }, signal);
          text = resultText({ type: 'result', id: callId, kind: 'fetch', ...r });
        }
        out.push({ type: 'function_call', call_id: callId, name: NATIVE_NAMES.fetch, arguments: JSON.stringify({ url }) });
        out.push({ type: 'function_call_output', call_id: callId, output: text });
        continue;
      }
      const opened = openResults(item.encrypted_content, rails.orgId);
      const query = String(action.query ?? opened?.query ?? '');
      let text: string;
      if (opened) text = searchText({ query, provider: opened.provider, results: opened.items });
      else {
        const r = await runNativeCall(rails, set, 'search', { query }, signal);
        text = resultText({ type: 'result', id: String(item.id), kind: 'search', ...r });
      }
      out.push({ type: 'function_call', call_id: callId, name: NATIVE_NAMES.search, arguments: JSON.stringify({ query }) });
      out.push({ type: 'function_call_output', call_id: callId, output: text });
    }
    input = out;
  }
  return withSearchFunctions({ ...req, input }, rest, set);
}

/**
 * The request's tools as the translated path offers them: hosted search as the gateway's function
 * tools, a `{type:'web_search…'}` choice (or an allowed_tools list naming it) naming the search function.
 */
export function withSearchFunctions(req: ResponsesRequest, rest: Tool[], set: NativeToolSet): ResponsesRequest {
  const fns = functionTools(set).map((f) => ({ type: 'function', name: f.function.name, description: f.function.description, parameters: f.function.parameters }));
  const choice = req.tool_choice;
  const search = { type: 'function', name: NATIVE_NAMES.search };
  const hosted = (t: unknown) => /^web_search/.test(String((t as { type?: unknown } | null)?.type));
  let tool_choice: ResponsesRequest['tool_choice'] = choice;
  if (hosted(choice)) tool_choice = search;
  // an allowed_tools list naming the hosted search names the gateway's search function instead
  else if (typeof choice === 'object' && choice.type === 'allowed_tools' && Array.isArray(choice.tools)) tool_choice = { ...choice, tools: choice.tools.map((t) => (hosted(t) ? search : t)) };
  return { ...req, tools: [...rest, ...fns], tool_choice };
}

/** A text step → a message item whose output_text carries url_citation annotations. */
function messageWithCitations(steps: NativeStep[], i: number, text: string): OutputItem {
  const fromSearch = citedSources(text, resultsBefore(steps, i)).map((c) => ({ start: c.start, end: c.end, url: c.url, title: c.title }));
  const fromPages = citedDocuments(text, fetchedBefore(steps, i)).map((c) => ({ start: c.start, end: c.end, url: c.doc.url, title: c.doc.title ?? c.doc.url }));
  const annotations = [...fromSearch, ...fromPages].sort((a, b) => a.start - b.start).map((c) => ({ type: 'url_citation', start_index: c.start, end_index: c.end, url: c.url, title: c.title }));
  return { type: 'message', id: newId('msg'), status: 'completed', role: 'assistant', content: [outputText(text, annotations)] };
}

/**
 * The output item a step produces, if any (a call's item is produced by its result; a turn's
 * reasoning is a `reasoning` item, before that turn's message and search calls, as on the plain
 * path); seals are bound to `orgId`.
 */
export function stepItems(steps: NativeStep[], i: number, orgId: string, req?: ResponsesRequest): OutputItem[] {
  const s = steps[i];
  if (s.type === 'reasoning') return [reasoningItem(newId('rs'), s.text, 'completed', s.blocks)];
  if (s.type === 'text') return [messageWithCitations(steps, i, s.text)];
  if (s.type === 'client_calls') return s.calls.map((c) => functionCallItem(newId('fc'), c, 'completed', req));
  if (s.type !== 'result') return [];
  const call = steps.find((x) => x.type === 'call' && x.id === s.id) as Extract<NativeStep, { type: 'call' }> | undefined;
  const query = String(call?.input.query ?? '');
  const id = `ws_${s.id.replace(/^srvtoolu_/, '')}`;
  if (s.kind === 'fetch') {
    const action = { type: 'open_page', url: String(call?.input.url ?? '') };
    if (s.error || s.outcome?.kind !== 'fetch') return [{ type: 'web_search_call', id, status: 'failed', action, error: { code: s.error?.code ?? 'unavailable', message: s.error?.message ?? '' } }];
    return [{ type: 'web_search_call', id, status: 'completed', action, encrypted_content: sealPage(orgId, s.outcome) }];
  }
  if (s.error || s.outcome?.kind !== 'search') {
    return [{ type: 'web_search_call', id, status: 'failed', action: { type: 'search', query }, error: { code: s.error?.code ?? 'unavailable', message: s.error?.message ?? '' } }];
  }
  const o = s.outcome;
  return [{ type: 'web_search_call', id, status: 'completed', action: { type: 'search', query, sources: o.results.map((r) => ({ type: 'url', url: r.url })) }, encrypted_content: sealResults(orgId, o.query, o.provider, o.results) }];
}

/**
 * The answer's output items; the last turn's refusal (OpenAI's `message.refusal`) a message of its
 * own with a `refusal` content part, as the plain path answers it (response.ts).
 */
export function transcriptOutput(t: NativeTranscript, orgId: string, req?: ResponsesRequest): OutputItem[] {
  const items = t.steps.flatMap((_, i) => stepItems(t.steps, i, orgId, req));
  if (t.refusal?.text) items.push(messageItem(newId('msg'), [{ type: 'refusal', text: t.refusal.text }]));
  return items;
}
