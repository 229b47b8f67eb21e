import { ApiError } from '../../../shared/errors/ApiError';
import { parseArguments, type CanonicalTool } from '../canonical';
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
 *   come back as `shell_call` items with that action.
 */
export interface OfferedTool {
  upstream: string;
  kind: 'function' | 'custom' | 'tool_search' | 'apply_patch' | 'shell';
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

export const prefixedName = (namespace: string, name: string) => `${namespace}${NAMESPACE_SEPARATOR}${name}`;

const unsupported = (type: string, where = '') => new ApiError(400, 'unsupported_tool', `Tool type '${type}'${where} is not supported; use function, custom, namespace, apply_patch or shell tools.`);

function member(t: Tool, namespace?: string, context?: string): OfferedTool {
  const name = String(t.name);
  const kind = t.type === 'custom' ? 'custom' : 'function';
  return { upstream: namespace ? prefixedName(namespace, name) : name, kind, name, ...(namespace ? { namespace } : {}), declared: t, ...(context ? { context } : {}) };
}

function entries(tools: Tool[]): OfferedTool[] {
  const out: OfferedTool[] = [];
  for (const t of tools) {
    if (t.type === 'function' || t.type === 'custom') out.push(member(t));
    else if (t.type === 'namespace') {
      const ns = String(t.name);
      for (const m of (t.tools as Tool[] | undefined) ?? []) {
        if (m.type !== 'function' && m.type !== 'custom') throw unsupported(m.type, ` inside namespace '${ns}'`);
        out.push(member(m, ns, typeof t.description === 'string' ? t.description : undefined));
      }
    } else if (t.type === 'tool_search') {
      if (t.execution === 'client') out.push({ upstream: TOOL_SEARCH, kind: 'tool_search', name: TOOL_SEARCH, declared: t });
    } else if (t.type === 'apply_patch') {
      out.push({ upstream: APPLY_PATCH, kind: 'apply_patch', name: APPLY_PATCH, declared: t });
    } else if (t.type === 'shell') {
      // a container environment (container_auto, container_reference) is OpenAI's hosted shell, which the gateway does not run
      const environment = (t.environment as { type?: unknown } | null | undefined)?.type;
      if (environment !== undefined && environment !== 'local') throw unsupported(`shell`, ` with environment '${String(environment)}'`);
      out.push({ upstream: SHELL, kind: 'shell', name: SHELL, declared: t });
    } else if (!/^web_search/.test(t.type)) throw unsupported(t.type); // hosted web search runs on the gateway's rails
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

/** Every tool the upstream is offered for this request; two declared tools of one upstream name: 400. */
export function offeredTools(req: { tools?: Tool[]; input?: unknown }): OfferedTool[] {
  const out = entries(req.tools ?? []);
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
/** OpenAI's apply_patch operation (ResponseApplyPatchToolCall's CreateFile, UpdateFile, DeleteFile) as function parameters. */
const APPLY_PATCH_INPUT = {
  type: 'object',
  properties: {
    type: { type: 'string', enum: ['create_file', 'update_file', 'delete_file'], description: 'create_file: a new file, update_file: change an existing file, delete_file: remove a file.' },
    path: { type: 'string', description: 'Path of the file, relative to the workspace root.' },
    diff: { type: 'string', description: 'For create_file and update_file: the V4A diff to apply (for create_file every line of the new file prefixed with "+"). Leave empty for delete_file.' },
  },
  required: ['type', 'path', 'diff'],
  additionalProperties: false,
};
/** OpenAI's shell call action (ResponseFunctionShellToolCall.Action) as function parameters. */
const SHELL_INPUT = {
  type: 'object',
  properties: {
    commands: { type: 'array', items: { type: 'string' }, description: 'The shell commands to run, in order.' },
    // plain integers, left out for no limit: not every upstream's schema dialect takes a type list with null (Gemini's does not)
    timeout_ms: { type: 'integer', description: 'Maximum wall-clock time in milliseconds for the commands; leave out for no limit.' },
    max_output_length: { type: 'integer', description: 'Maximum number of characters of output to capture from each command; leave out for no limit.' },
  },
  required: ['commands'],
};
const SHELL_DESCRIPTION = "Run shell commands in the user's environment and read their stdout, stderr and exit code.";
const APPLY_PATCH_DESCRIPTION =
  'Create, update or delete one file of the workspace. Give the operation type, the file path and, to create or update a file, the diff in the V4A format: context lines prefixed with " ", removed lines with "-", added lines with "+", hunks introduced by "@@" lines.';

function describeCustom(t: Tool): string {
  const f = t.format as { type?: string; syntax?: string; definition?: string } | undefined;
  const grammar = f?.type === 'grammar' && typeof f.definition === 'string' ? `The input must match this ${f.syntax ?? ''} grammar:\n${f.definition}` : '';
  return [t.description, grammar].filter((s) => typeof s === 'string' && s).join('\n\n');
}

/** The function the upstream is offered for an offered tool. */
export function canonicalTool(e: OfferedTool): CanonicalTool {
  const t = e.declared;
  const own = e.kind === 'custom' ? describeCustom(t) : e.kind === 'apply_patch' ? APPLY_PATCH_DESCRIPTION : e.kind === 'shell' ? SHELL_DESCRIPTION : typeof t.description === 'string' ? t.description : '';
  const description = [e.context, own].filter(Boolean).join('\n\n');
  const parameters = e.kind === 'custom' ? CUSTOM_INPUT : e.kind === 'apply_patch' ? APPLY_PATCH_INPUT : e.kind === 'shell' ? SHELL_INPUT : ((t.parameters as Record<string, unknown> | null | undefined) ?? (e.kind === 'tool_search' ? SEARCH_INPUT : { type: 'object', properties: {} }));
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

export type ApplyPatchOperation = { type: 'create_file' | 'update_file'; path: string; diff: string } | { type: 'delete_file'; path: string };

/**
 * A client-run tool's call arguments as an object (parseArguments: broken JSON reads as no fields),
 * or the object under `nested` when the model nested its fields there, as the call item does.
 */
function callFields(args: string, nested: string): Record<string, unknown> {
  const v = parseArguments(args);
  const inner = v[nested];
  return inner && typeof inner === 'object' ? (inner as Record<string, unknown>) : v;
}

/**
 * An apply_patch call's `operation` from the upstream's function arguments: `{type, path, diff}`
 * (or the same under `operation`, as the call item nests it); an unknown type is an update, and
 * a delete carries no diff, as OpenAI's DeleteFile.
 */
export function applyPatchOperation(args: string): ApplyPatchOperation {
  // not JSON (or not complete yet): an update of no path
  const v = callFields(args, 'operation');
  const path = typeof v.path === 'string' ? v.path : '';
  if (v.type === 'delete_file') return { type: 'delete_file', path };
  return { type: v.type === 'create_file' ? 'create_file' : 'update_file', path, diff: typeof v.diff === 'string' ? v.diff : '' };
}

/** An echoed apply_patch_call's operation as the upstream's function arguments. */
export function applyPatchArguments(operation: unknown): string {
  const o = (operation && typeof operation === 'object' ? operation : {}) as Record<string, unknown>;
  return JSON.stringify({ type: o.type, path: o.path, diff: typeof o.diff === 'string' ? o.diff : '' });
}

export interface ShellAction {
  commands: string[];
  timeout_ms: number | null;
  max_output_length: number | null;
}

/**
 * A shell call's `action` from the upstream's function arguments (`{commands, timeout_ms,
 * max_output_length}`, or the same under `action`); one command given as a string is a list of one.
 */
export function shellAction(args: string): ShellAction {
  // not JSON (or not complete yet): no commands
  const v = callFields(args, 'action');
  const raw = typeof v.commands === 'string' ? [v.commands] : Array.isArray(v.commands) ? v.commands : typeof v.command === 'string' ? [v.command] : [];
  const int = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) ? Math.trunc(n) : null);
  return { commands: raw.map(String), timeout_ms: int(v.timeout_ms), max_output_length: int(v.max_output_length) };
}

/** An echoed shell_call's action as the upstream's function arguments. */
export function shellArguments(action: unknown): string {
  return JSON.stringify(shellAction(JSON.stringify(action ?? {})));
}
