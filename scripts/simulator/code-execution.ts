import crypto from 'crypto';

type Block = Record<string, unknown> & { type: string };

/**
 * Anthropic's code execution tool as the simulated Claude answers it (Anthropic's code execution tool
 * document; @anthropic-ai/sdk 1.17.0 resources/beta/messages/messages.d.ts). A request offering a
 * `code_execution_*` tool runs in a container: the answer's `container` is `{id, expires_at, skills}`
 * (BetaContainer), the request's own `container` id (a string or `{id}`) when it names one ("Container
 * identifier for reuse across requests"), else a new one, made in the calling key's workspace (a
 * container another key made, or none did, is 404 `not_found_error`: containerNotHeld); JSON in the Message, streamed in
 * `message_delta`'s delta (BetaRawMessageDeltaEvent.Delta.container; `message_start` keeps null). A
 * user asking to create, write or save a file gets the tool run first: a `server_tool_use` block and
 * its result, which holds the produced file's id (`bash_code_execution_tool_result` >
 * `bash_code_execution_result` > `bash_code_execution_output {file_id}`; the 2025-05-22 tool:
 * `code_execution_tool_result` > `code_execution_result` > `code_execution_output {file_id}`).
 */
export interface CodeExecution {
  container: { id: string; expires_at: string; skills: unknown[] | null };
  /** The tool's blocks, before the answer's text; none when no file was asked for. */
  blocks: Block[];
}

/** Lifetime the simulated containers report from each answer (the API gives each answer an `expires_at`). */
const CONTAINER_MS = 60 * 60_000;

const hex = () => crypto.randomBytes(8).toString('hex');

/**
 * The API key (its workspace) each simulated container was made with: a container lives in one
 * workspace, and a request with a key of another names a container its workspace does not hold. The
 * oldest are forgotten past MAX_CONTAINERS.
 */
const madeWith = new Map<string, string>();
const MAX_CONTAINERS = 10_000;

const codeTool = (body: Record<string, unknown>) => (body.tools as Array<{ type?: unknown }> | undefined)?.find((t) => typeof t?.type === 'string' && t.type.startsWith('code_execution_'));

function namedContainer(body: Record<string, unknown>): string | undefined {
  const asked = body.container as { id?: unknown } | string | null | undefined;
  return typeof asked === 'string' ? asked : typeof asked?.id === 'string' ? asked.id : undefined;
}

/**
 * The container a code execution request names that the calling key's workspace does not hold (made
 * with another key, or never made), answered 404 `not_found_error` as Anthropic answers an id its
 * workspace lacks (a never-made container id is a 404 `not_found_error`, as reported in
 * pydantic/pydantic-ai#7833; no published body words were found, so the simulator's are its own).
 */
export function containerNotHeld(body: Record<string, unknown>, apiKey: string): string | undefined {
  const named = codeTool(body) ? namedContainer(body) : undefined;
  return named !== undefined && madeWith.get(named) !== apiKey ? named : undefined;
}

/** `apiKey`: the calling key, whose workspace a new container is made in (containerNotHeld). */
export function codeExecution(body: Record<string, unknown>, lastUser: string, apiKey = ''): CodeExecution | undefined {
  const tool = codeTool(body);
  if (!tool) return undefined;
  const asked = body.container as { id?: unknown; skills?: unknown } | string | null | undefined;
  const named = namedContainer(body);
  const skills = typeof asked === 'object' && Array.isArray(asked?.skills) ? asked.skills : null;
  const container = { id: named ?? `container_sim${hex()}`, expires_at: new Date(Date.now() + CONTAINER_MS).toISOString(), skills };
  if (named === undefined) {
    madeWith.set(container.id, apiKey);
    if (madeWith.size > MAX_CONTAINERS) madeWith.delete(madeWith.keys().next().value!);
  }
  if (!/\b(create|write|save)\b.*\bfile\b/i.test(lastUser)) return { container, blocks: [] };
  const useId = `srvtoolu_sim${hex()}`;
  const fileId = `file_sim${hex()}`;
  if (tool.type === 'code_execution_20250522') {
    return {
      container,
      blocks: [
        { type: 'server_tool_use', id: useId, name: 'code_execution', input: { code: "open('out.txt', 'w').write('sim')" } },
        { type: 'code_execution_tool_result', tool_use_id: useId, content: { type: 'code_execution_result', stdout: '', stderr: '', return_code: 0, content: [{ type: 'code_execution_output', file_id: fileId }] } },
      ],
    };
  }
  return {
    container,
    blocks: [
      { type: 'server_tool_use', id: useId, name: 'bash_code_execution', input: { command: 'echo sim > out.txt' } },
      { type: 'bash_code_execution_tool_result', tool_use_id: useId, content: { type: 'bash_code_execution_result', stdout: '', stderr: '', return_code: 0, content: [{ type: 'bash_code_execution_output', file_id: fileId }] } },
    ],
  };
}
