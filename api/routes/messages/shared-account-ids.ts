import { ApiError } from '../../../shared/errors/ApiError';
import { isRecord } from '../../../shared/is-record';
import { threadNotFound } from './thread-not-found';
import type { Handed, HandedKind } from '../../../shared/tenancy/handed-out-ids';
import type { WorkspacePin } from '../../dispatch/workspace-pin';

/**
 * Ids a messages request may name that Anthropic resolves in the workspace of the key it is called
 * with. The native bypass sends the body unchanged (api/routes/messages/router.ts) on the platform's
 * credential, one workspace shared by every organization (and the operator), and the messages dialect
 * takes no caller's own key (docs/api.md, Passthrough): such an id would reach what another
 * organization left there. Each is refused before a lane, a budget or the upstream is reached, as an
 * id the caller's workspace does not hold (docs/security.md, "Ids an upstream resolves"): a file 404,
 * a thread 404, the others 400 `invalid_request`. A translated upstream is never
 * sent them (api/dialects/messages/request.ts refuses a `file` source; native-only.ts a `container`).
 * The fields, as @anthropic-ai/sdk 1.17.0 types them (resources/beta/messages/messages.d.ts):
 *
 * - an image's or document's `source` `{type: 'file', file_id}` (BetaFileImageSource,
 *   BetaFileDocumentSource: the Files API), anywhere a block may sit (a tool result's content, a
 *   `content` document source's), and a `container_upload` block's `file_id`
 *   (BetaContainerUploadBlockParam): answered as Anthropic answers a file id its workspace does not
 *   hold, 404 `not_found_error`, "File `<id>` not found." (its Files API guide,
 *   platform.claude.com/docs/en/build-with-claude/files, "Error handling": "File not found (404): The
 *   specified `file_id` doesn't exist or you don't have access to it", and its example body
 *   `{"type": "error", "error": {"type": "not_found_error", "message": "File `file_011CNha8iCJcU1wXNR6q4V8w`
 *   not found."}}`; an earlier version of that page showed `invalid_request_error` "File not found:
 *   <id>", which the gateway answered with 400 before). No SDK class is keyed to it (@anthropic-ai/sdk
 *   1.17 has FileExpiredError, `404 file_expired`, for a file past its expiry only): the SDK raises its
 *   NotFoundError;
 * - `container` as an id, or `{id}` (MessageCreateParams.container: "Container identifier for reuse
 *   across requests"), and a `custom` skill of `container.skills` (BetaSkillParams: "'custom'
 *   (user-defined)"; Anthropic's own skills, type `anthropic`, are no workspace's and pass): 400, the
 *   field named. No published answer of Anthropic's to an unknown container id was found (its code
 *   execution guide names `container_expired` as a tool result's error code, not an HTTP answer, and a
 *   public report, pydantic/pydantic-ai#7833, records an untyped 500 for a lapsed container), so the
 *   gateway keeps its 400 rather than guess;
 * - `thread` `{type: 'continue', previous_message_id}` (BetaMessageThreadParam: "Server-held
 *   conversation state"). (`diagnostics.previous_message_id` is sent as null instead: dropSharedMessageIds.)
 *
 * An id the gateway handed the caller's organization in an earlier native-bypass answer (its
 * container, a file its code execution produced, a thread's message: recorded by the chat worker,
 * workers/providers/anthropic/handed-ids.ts) is that organization's own and passes, sent as given,
 * while it is kept (shared/tenancy/handed-out-ids.ts), and only to a deployment of the workspace that
 * made it (the provider whose credential it was called with: WorkspacePin). Code execution results echoed in an assistant
 * turn (`bash_code_execution_output.file_id`, ...) are the model's own earlier output, not an input
 * it reads by id, and pass.
 *
 * Two steps, so that the common request (naming none) costs next to nothing: sharedAccountIds lists
 * the ids named, or undefined, without walking the messages' blocks when the raw body cannot hold a
 * `file_id` (the route's caller knows: api/middleware/body.ts rawLacksWatched); only a list is
 * awaited, by refuseSharedAccountIds, which looks up every id once.
 */

/**
 * The ids the request names, in the order they are checked, or undefined when it names none.
 * `blocksMayName`: whether the messages' blocks may hold a `file_id` at all (false: not walked).
 */
export function sharedAccountIds(body: Record<string, unknown>, blocksMayName: boolean): NamedId[] | undefined {
  const named: NamedId[] = [];
  if (blocksMayName) walk(body.messages, 'messages', named);
  const c = body.container;
  const containerId = typeof c === 'string' ? c : isRecord(c) && typeof c.id === 'string' ? c.id : undefined;
  if (containerId !== undefined) named.push({ kind: 'container', id: containerId, refusal: () => refused(`container: container '${cut(containerId)}' not found. Containers are reused only by the organization they were made for, within their lifetime; leave out the id to start a new one.`, 'container') });
  const skills = isRecord(c) && Array.isArray(c.skills) ? c.skills : [];
  skills.forEach((s, i) => {
    if (isRecord(s) && s.type === 'custom') named.push({ id: s.skill_id, refusal: () => refused(`container.skills.${i}: skill '${cut(s.skill_id)}' not found. Custom skills are not available on this model; Anthropic's own skills (type 'anthropic') are.`, `container.skills[${i}]`) });
  });
  const thread = body.thread;
  if (isRecord(thread) && thread.previous_message_id != null) {
    named.push({ kind: 'message', id: thread.previous_message_id, refusal: () => threadNotFound(thread.previous_message_id, 'Threads are continued only by the organization they were made for, while the gateway keeps their record.') });
  }
  return named.length ? named : undefined;
}

/**
 * Refuses the first of the `named` ids (sharedAccountIds) the gateway did not hand the caller's
 * organization: one lookup (`owned`) for them all. Returns the workspace the handed ids were made in
 * (WorkspacePin), which the request may then be sent to only, or undefined when none was recorded
 * with one (an older worker's record: any workspace, as before). An id made in another workspace
 * than the first's is refused as not found: no one workspace holds them all.
 */
export async function refuseSharedAccountIds(named: NamedId[], owned: OwnedLookup): Promise<WorkspacePin | undefined> {
  // one lookup for the ids before the first that no organization is ever handed (a custom skill, an id that is not a string)
  const never = named.findIndex((n) => !n.kind || typeof n.id !== 'string');
  const ask = (never < 0 ? named : named.slice(0, never)) as Array<NamedId & { kind: HandedKind; id: string }>;
  const mine = ask.length ? await owned(ask.map((n) => ({ kind: n.kind, id: n.id }))) : [];
  let pin: WorkspacePin | undefined;
  for (let i = 0; i < ask.length; i++) {
    const handed = mine[i];
    if (!handed) throw ask[i].refusal();
    if (handed.workspace === null) continue;
    if (!pin) pin = { providerId: handed.workspace, refusal: ask[i].refusal };
    else if (pin.providerId !== handed.workspace) throw ask[i].refusal();
  }
  if (never >= 0) throw named[never].refusal();
  return pin;
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

/** Whether the gateway handed each id to the caller's organization, and in which workspace (shared/tenancy/handed-out-ids.ts ownedHandedIds). */
export type OwnedLookup = (named: Array<{ kind: HandedKind; id: string }>) => Promise<Handed[]>;

/** An id the request names, in the order the fields are checked; `kind` absent: never handed out (a custom skill). */
export interface NamedId {
  kind?: HandedKind;
  id: unknown;
  refusal: () => ApiError;
}

const cut = (v: unknown) => String(v).slice(0, 80);
const refused = (message: string, param: string) => new ApiError(400, 'invalid_request', message, { param });

/**
 * Every block of the messages, nested ones too, except a tool use's `input` (the caller's own data):
 * a file source or a `container_upload` block is refused, named by its path as Anthropic names fields.
 */
function walk(v: unknown, path: string, named: NamedId[]): void {
  if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${path}.${i}`, named));
  if (!isRecord(v)) return;
  if ((v.type === 'file' || v.type === 'container_upload') && v.file_id != null) named.push({ kind: 'file', id: v.file_id, refusal: () => fileNotFound(v.file_id, `${path}.file_id`) });
  for (const [k, x] of Object.entries(v)) if (k !== 'input' && typeof x === 'object' && x !== null) walk(x, `${path}.${k}`, named);
}

/** Anthropic's 404 for a file id its workspace does not hold, in its words (above), and what to send instead. */
const fileNotFound = (id: unknown, path: string) =>
  new ApiError(404, 'file_not_found', `File \`${cut(id)}\` not found. File ids other than those this model's code execution made for your organization are not sent to its upstream (one account for every organization); send the file itself (a base64 or url source).`, { param: path.replace(/\.(\d+)/g, '[$1]') });
