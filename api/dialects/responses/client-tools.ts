import { parseArguments } from '../canonical';

/**
 * The client-run tools the gateway offers upstream as functions of their own (offered-tools.ts):
 * `apply_patch`, `shell` and `local_shell`. Their function parameters (the caller declares none), and
 * the call item's operation or action read back from the upstream's arguments, and written back as
 * arguments when the caller echoes the call.
 */

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
/** OpenAI's local shell exec action (LocalShellCall.Action) as function parameters: the argv and where and how long to run it. */
const LOCAL_SHELL_INPUT = {
  type: 'object',
  properties: {
    command: { type: 'array', items: { type: 'string' }, description: 'The command to run, as its argument list (e.g. ["bash", "-lc", "ls -la"]).' },
    working_directory: { type: 'string', description: 'The directory to run the command in; leave out for the current one.' },
    timeout_ms: { type: 'integer', description: 'Maximum wall-clock time in milliseconds for the command; leave out for no limit.' },
  },
  required: ['command'],
};
const LOCAL_SHELL_DESCRIPTION = "Run a command on the user's machine and read its output.";
const SHELL_DESCRIPTION = "Run shell commands in the user's environment and read their stdout, stderr and exit code.";
const APPLY_PATCH_DESCRIPTION =
  'Create, update or delete one file of the workspace. Give the operation type, the file path and, to create or update a file, the diff in the V4A format: context lines prefixed with " ", removed lines with "-", added lines with "+", hunks introduced by "@@" lines.';

/** The description and parameters of the function a client-run tool is offered as (the caller declares neither). */
export const CLIENT_FUNCTIONS: Partial<Record<string, { description: string; parameters: Record<string, unknown> }>> = {
  apply_patch: { description: APPLY_PATCH_DESCRIPTION, parameters: APPLY_PATCH_INPUT },
  shell: { description: SHELL_DESCRIPTION, parameters: SHELL_INPUT },
  local_shell: { description: LOCAL_SHELL_DESCRIPTION, parameters: LOCAL_SHELL_INPUT },
};

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

/** OpenAI's LocalShellCall.Action: `exec` of an argv, `env` always there (empty unless the model set some), the optional fields only when given. */
export interface LocalShellAction {
  type: 'exec';
  command: string[];
  env: Record<string, string>;
  timeout_ms?: number;
  working_directory?: string;
  user?: string;
}

/**
 * A local shell call's `action` from the upstream's function arguments (`{command, working_directory,
 * timeout_ms}`, or the same under `action`); a command given as one string is an argv of one.
 */
export function localShellAction(args: string): LocalShellAction {
  // not JSON (or not complete yet): no command
  const v = callFields(args, 'action');
  const command = typeof v.command === 'string' ? [v.command] : Array.isArray(v.command) ? v.command.map(String) : [];
  const env = v.env && typeof v.env === 'object' && !Array.isArray(v.env) ? Object.fromEntries(Object.entries(v.env).map(([k, x]) => [k, String(x)])) : {};
  const action: LocalShellAction = { type: 'exec', command, env };
  if (typeof v.timeout_ms === 'number' && Number.isFinite(v.timeout_ms)) action.timeout_ms = Math.trunc(v.timeout_ms);
  if (typeof v.working_directory === 'string' && v.working_directory) action.working_directory = v.working_directory;
  if (typeof v.user === 'string' && v.user) action.user = v.user;
  return action;
}

/** An echoed local_shell_call's action as the upstream's function arguments (its `type` left out). */
export function localShellArguments(action: unknown): string {
  const a = localShellAction(JSON.stringify(action ?? {}));
  return JSON.stringify({ command: a.command, ...(Object.keys(a.env).length ? { env: a.env } : {}), working_directory: a.working_directory, timeout_ms: a.timeout_ms, user: a.user });
}
