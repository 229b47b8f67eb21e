import { ApiError } from '../../../shared/errors/ApiError';
import { isRecord } from '../../../shared/is-record';

/**
 * Ids a messages request may name that Anthropic resolves in the workspace of the key it is called
 * with. The native bypass sends the body unchanged (api/routes/messages/router.ts) on the platform's
 * credential, one workspace shared by every organization (and the operator), and the messages dialect
 * takes no caller's own key (docs/api.md, Passthrough): such an id would reach what another
 * organization left there. Each is refused 400 `invalid_request` before a lane, a budget or the
 * upstream is reached (docs/security.md, "Ids an upstream resolves"). A translated upstream is never
 * sent them (api/dialects/messages/request.ts refuses a `file` source; native-only.ts a `container`).
 * The fields, as @anthropic-ai/sdk 1.17.0 types them (resources/beta/messages/messages.d.ts):
 *
 * - an image's or document's `source` `{type: 'file', file_id}` (BetaFileImageSource,
 *   BetaFileDocumentSource: the Files API), anywhere a block may sit (a tool result's content, a
 *   `content` document source's), and a `container_upload` block's `file_id`
 *   (BetaContainerUploadBlockParam): answered "File not found: <id>", the not_found_error message
 *   Anthropic gives a missing file;
 * - `container` as an id, or `{id}` (MessageCreateParams.container: "Container identifier for reuse
 *   across requests"), and a `custom` skill of `container.skills` (BetaSkillParams: "'custom'
 *   (user-defined)"; Anthropic's own skills, type `anthropic`, are no workspace's and pass);
 * - `thread` `{type: 'continue', previous_message_id}` (BetaMessageThreadParam: "Server-held
 *   conversation state"). (`diagnostics.previous_message_id` is sent as null instead: dropSharedMessageIds.)
 *
 * Code execution results echoed in an assistant turn (`bash_code_execution_output.file_id`, ...) are the
 * model's own earlier output, not an input it reads by id, and pass.
 */
export function refuseSharedAccountIds(body: Record<string, unknown>): void {
  walk(body.messages, 'messages');
  const c = body.container;
  const containerId = typeof c === 'string' ? c : isRecord(c) && typeof c.id === 'string' ? c.id : undefined;
  if (containerId !== undefined) throw refused(`container: container '${cut(containerId)}' not found. Containers are not reused across requests on this model; leave out the id to start a new one.`, 'container');
  const skills = isRecord(c) && Array.isArray(c.skills) ? c.skills : [];
  skills.forEach((s, i) => {
    if (isRecord(s) && s.type === 'custom') throw refused(`container.skills.${i}: skill '${cut(s.skill_id)}' not found. Custom skills are not available on this model; Anthropic's own skills (type 'anthropic') are.`, `container.skills[${i}]`);
  });
  const thread = body.thread;
  if (isRecord(thread) && thread.previous_message_id != null) {
    throw refused(`thread.previous_message_id: message '${cut(thread.previous_message_id)}' not found. Server-held threads are not available on this model; send the conversation in messages.`, 'thread.previous_message_id');
  }
}

/**
 * `diagnostics.previous_message_id` (BetaDiagnosticsParam: "The `id` (`msg_...`) from this client's
 * previous /v1/messages response. The server compares that request's prompt fingerprint against this
 * one and returns `diagnostics.cache_miss_reason`") is not refused but sent as null ("Pass `null` on
 * the first turn to opt in without a prior message to compare"): a client that opts in sends it on
 * every turn after the first, and the gateway cannot tell its own earlier message from another
 * organization's in the shared workspace, whose prompt the comparison would describe. The caller's
 * body is the route's own parse, changed in place.
 */
export function dropSharedMessageIds(body: Record<string, unknown>): void {
  const diagnostics = body.diagnostics;
  if (isRecord(diagnostics) && diagnostics.previous_message_id != null) diagnostics.previous_message_id = null;
}

const cut = (v: unknown) => String(v).slice(0, 80);
const refused = (message: string, param: string) => new ApiError(400, 'invalid_request', message, { param });

/**
 * Every block of the messages, nested ones too, except a tool use's `input` (the caller's own data):
 * a file source or a `container_upload` block is refused, named by its path as Anthropic names fields.
 */
function walk(v: unknown, path: string): void {
  if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${path}.${i}`));
  if (!isRecord(v)) return;
  if ((v.type === 'file' || v.type === 'container_upload') && v.file_id != null) throw fileNotFound(v.file_id, `${path}.file_id`);
  for (const [k, x] of Object.entries(v)) if (k !== 'input' && typeof x === 'object' && x !== null) walk(x, `${path}.${k}`);
}

const fileNotFound = (id: unknown, path: string) =>
  refused(`File not found: ${cut(id)}. File ids are not sent to this model's upstream (one account for every organization); send the file itself (a base64 or url source).`, path.replace(/\.(\d+)/g, '[$1]'));
