import { ApiError } from '../../../shared/errors/ApiError';
import type { CanonicalTool } from '../canonical';
import { CLIENT_FUNCTIONS } from './client-tools';
import type { ResponsesItem } from './request';

type Tool = Record<string, unknown> & { type: string };

/**
 * A tool as the upstream is offered it (always a function) and as the caller declared it. The
 * upstream only knows flat function tools, so:
 * - a `namespace` (NamespaceToolParam) member goes as `<namespace>__<name>` and its calls come back
 *   with `name` and `namespace`, as OpenAI reports a call inside a namespace;
 * - a `custom` tool (free-form input, optionally a grammar) goes as a function of one string
 *   `input`, its calls come back as `custom_tool_call` items with that input;
 * - a client-executed `tool_search` goes as the function `tool_search` with its own parameters, its
 *   calls come back as `tool_search_call` items; a hosted (server) one is not offered: every tool,
 *   deferred ones included, is offered directly;
 * - the client-executed `apply_patch` tool (ApplyPatchTool) goes as the function `apply_patch` whose
 *   parameters are the call's `operation` (`type` create_file/update_file/delete_file, `path`,
 *   `diff`); its calls come back as `apply_patch_call` items with that operation;
 * - the client-executed `shell` tool (FunctionShellTool) goes as the function `shell` whose
 *   parameters are the call's `action` (`commands`, `timeout_ms`, `max_output_length`); its calls
 *   come back as `shell_call` items with that action;
 * - the older client-executed `local_shell` tool (LocalShellTool) goes as the function `local_shell`
 *   whose parameters are the exec action's (`command` an argv list, `working_directory`,
 *   `timeout_ms`); its calls come back as `local_shell_call` items with that action.
 */
export interface OfferedTool {
  upstream: string;
  kind: 'function' | 'custom' | 'tool_search' | 'apply_patch' | 'shell' | 'local_shell';
  name: string;
  namespace?: string;
  declared: Tool;
  /** The namespace's description, shown before the member's own. */
  context?: string;
}

export const NAMESPACE_SEPARATOR = '__';
export const TOOL_SEARCH = 'tool_search';
export const APPLY_PATCH = 'apply_patch';
export const SHELL = 'shell';
export const LOCAL_SHELL = 'local_shell';
/** The client-run tools offered as a function of their own name: `{type}` names them in tool_choice. */
export const CLIENT_TOOLS: readonly string[] = [APPLY_PATCH, SHELL, LOCAL_SHELL];

export const prefixedName = (namespace: string, name: string) => `${namespace}${NAMESPACE_SEPARATOR}${name}`;

/** A tool the gateway does not run, named by its place (`tools[i].type`) when it is one of `tools`. */
const unsupported = (type: string, where = '', param?: string) =>
  new ApiError(400, 'unsupported_tool', `Tool type '${type}'${where} is not supported; use function, custom, namespace, apply_patch, shell or local_shell tools.`, param ? { param } : undefined);

function member(t: Tool, namespace?: string, context?: string): OfferedTool {
  const name = String(t.name);
  const kind = t.type === 'custom' ? 'custom' : 'function';
  return { upstream: namespace ? prefixedName(namespace, name) : name, kind, name, ...(namespace ? { namespace } : {}), declared: t, ...(context ? { context } : {}) };
}

/** The tools offered for `tools` (`field`: the request field they came from, for a refusal's param; none for tools an input item loaded). */
function entries(tools: Tool[], field?: string): OfferedTool[] {
  const out: OfferedTool[] = [];
  for (const [i, t] of tools.entries()) {
    const at = (rest: string) => (field ? `${field}[${i}]${rest}` : undefined);
    if (t.type === 'function' || t.type === 'custom') out.push(member(t));
    else if (t.type === 'namespace') {
      const ns = String(t.name);
      for (const [j, m] of ((t.tools as Tool[] | undefined) ?? []).entries()) {
        if (m.type !== 'function' && m.type !== 'custom') throw unsupported(m.type, ` inside namespace '${ns}'`, at(`.tools[${j}].type`));
        out.push(member(m, ns, typeof t.description === 'string' ? t.description : undefined));
      }
    } else if (t.type === 'tool_search') {
      if (t.execution === 'client') out.push({ upstream: TOOL_SEARCH, kind: 'tool_search', name: TOOL_SEARCH, declared: t });
    } else if (t.type === 'apply_patch') {
      out.push({ upstream: APPLY_PATCH, kind: 'apply_patch', name: APPLY_PATCH, declared: t });
    } else if (t.type === 'shell') {
      // a container environment (container_auto, container_reference) is OpenAI's hosted shell, which the gateway does not run
      const environment = (t.environment as { type?: unknown } | null | undefined)?.type;
      if (environment !== undefined && environment !== 'local') throw unsupported(`shell`, ` with environment '${String(environment)}'`, at('.environment'));
      out.push({ upstream: SHELL, kind: 'shell', name: SHELL, declared: t });
    } else if (t.type === 'local_shell') {
      out.push({ upstream: LOCAL_SHELL, kind: 'local_shell', name: LOCAL_SHELL, declared: t });
    } else if (!/^web_search/.test(t.type)) throw unsupported(t.type, '', at('.type')); // hosted web search runs on the gateway's rails
  }
  return out;
}

/** Tools that input items add: `additional_tools`, and what a client-executed tool search loaded. */
function loadedTools(input: unknown): Tool[] {
  if (!Array.isArray(input)) return [];
  return (input as ResponsesItem[])
    .filter((i) => i.type === 'additional_tools' || (i.type === 'tool_search_output' && i.execution === 'client'))
    .flatMap((i) => (Array.isArray(i.tools) ? (i.tools as Tool[]) : []));
}

/** Whether the request declares a tool: in `tools`, or loaded by an input item. */
export const declaresTools = (req: { tools?: Tool[]; input?: unknown }): boolean => !!req.tools?.length || loadedTools(req.input).length > 0;

/**
 * The names a `{type: 'function', name}` choice may give: every named tool declared or loaded (a
 * function or custom tool), a namespace member by its own name or its flattened one. Unsupported
 * tool types are left to offeredTools to refuse.
 */
export function choosableNames(req: { tools?: Tool[]; input?: unknown }): Set<string> {
  const names = new Set<string>();
  for (const t of [...(req.tools ?? []), ...loadedTools(req.input)]) {
    if (t.type === 'namespace') {
      for (const m of (t.tools as Tool[] | undefined) ?? []) names.add(String(m.name)).add(prefixedName(String(t.name), String(m.name)));
    } else if (typeof t.name === 'string') names.add(t.name);
  }
  return names;
}

/** Every tool the upstream is offered for this request; two declared tools of one upstream name: 400. */
export function offeredTools(req: { tools?: Tool[]; input?: unknown }): OfferedTool[] {
  const out = entries(req.tools ?? [], 'tools');
  const names = new Set<string>();
  for (const e of out) {
    if (names.has(e.upstream)) throw new ApiError(400, 'invalid_request', `Two tools are named '${e.upstream}' once namespaces are flattened; rename one of them.`);
    names.add(e.upstream);
  }
  // A loaded tool may repeat a declared one (deferred, then found): offered once.
  for (const e of entries(loadedTools(req.input))) {
    if (names.has(e.upstream)) continue;
    names.add(e.upstream);
    out.push(e);
  }
  return out;
}

/** The declared tool a called upstream name stands for (undefined: the gateway's own, e.g. web_search). */
export function calledTool(req: { tools?: Tool[]; input?: unknown }, upstream: string): OfferedTool | undefined {
  return offeredTools(req).find((e) => e.upstream === upstream);
}

const CUSTOM_INPUT = { type: 'object', properties: { input: { type: 'string', description: 'The raw input of the tool.' } }, required: ['input'], additionalProperties: false };
const SEARCH_INPUT = { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] };

function describeCustom(t: Tool): string {
  const f = t.format as { type?: string; syntax?: string; definition?: string } | undefined;
  const grammar = f?.type === 'grammar' && typeof f.definition === 'string' ? `The input must match this ${f.syntax ?? ''} grammar:\n${f.definition}` : '';
  return [t.description, grammar].filter((s) => typeof s === 'string' && s).join('\n\n');
}

/** The function the upstream is offered for an offered tool. */
export function canonicalTool(e: OfferedTool): CanonicalTool {
  const t = e.declared;
  const client = CLIENT_FUNCTIONS[e.kind];
  const own = e.kind === 'custom' ? describeCustom(t) : client ? client.description : typeof t.description === 'string' ? t.description : '';
  const description = [e.context, own].filter(Boolean).join('\n\n');
  const parameters = e.kind === 'custom' ? CUSTOM_INPUT : client ? client.parameters : ((t.parameters as Record<string, unknown> | null | undefined) ?? (e.kind === 'tool_search' ? SEARCH_INPUT : { type: 'object', properties: {} }));
  const fn: CanonicalTool['function'] = { name: e.upstream, ...(description ? { description } : {}), parameters };
  if (e.kind === 'function' && typeof t.strict === 'boolean') fn.strict = t.strict;
  return { type: 'function', function: fn };
}

/** A custom tool's input from the upstream's function arguments (`{"input": …}`; else the raw text). */
export function customInput(args: string): string {
  try {
    const v = JSON.parse(args) as { input?: unknown };
    if (v && typeof v === 'object' && typeof v.input === 'string') return v.input;
  } catch {
    // not JSON: the model wrote the input itself
  }
  return args;
}
