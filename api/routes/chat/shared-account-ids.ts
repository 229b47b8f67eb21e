import { ApiError } from '../../../shared/errors/ApiError';
import { isRecord } from '../../../shared/is-record';

/**
 * Ids a chat completions body may name that an OpenAI-compatible upstream (openai, azure: the body is
 * sent as written, workers/providers/openai/chatComplete.ts) resolves in the account of the key it is
 * called with. On the platform's credential that account is shared by every organization (and the
 * operator), so such an id would reach what another organization left there. Unless the caller pays
 * with its own provider key (passthrough, api/dispatch/passthrough.ts: that account is its own), each
 * is refused 400 before a lane, a budget or the upstream is reached (docs/security.md, "Ids an upstream
 * resolves"). Checked against OpenAI's API document (test/fixtures/vendor/openai/openapi.json):
 *
 * - `messages[i].content[j].file.file_id` (ChatCompletionRequestMessageContentPartFile: "The ID of an
 *   uploaded file to use as input"), and a part's own `file_id` (a Responses-shaped `input_file` /
 *   `input_image` part, which OpenAI-compatible servers read on chat completions too: vLLM reads
 *   `input_image`, docs/providers.md; Mistral's FileChunk `{type: "file", file_id}`). Answered with OpenAI's not-found wording for a file id ("No
 *   such File object: <id>", its Files API's answer; api/middleware/error-body.ts);
 * - an assistant message's `audio.id` (ChatCompletionRequestAssistantMessage.audio: "Unique identifier
 *   for a previous audio response from the model"), kept by OpenAI in the account;
 * - `data_sources`, Azure OpenAI's "On Your Data" (learn.microsoft.com/azure/ai-services/openai/references/
 *   azure-search: an index reached with `system_assigned_managed_identity` or a user-assigned one, the
 *   Azure OpenAI resource's own; @azure/openai 2.0.0's AzureSearchChatExtensionParameters: "If not
 *   otherwise provided, On Your Data will attempt to use System Managed Identity (default credential)
 *   authentication"; `embedding_dependency` names a deployment of the resource): the platform's Azure
 *   resource, not the caller's. Refused whatever the kind (it is no field of OpenAI's own API).
 *
 * Returns the place of the first `input_audio` part (`messages[i].content[j]`), which this scan of
 * every part finds at no other pass: audio input is priced apart (shared/catalog/audio-prices.ts).
 */
export function refuseSharedAccountIds(body: Record<string, unknown>, ownKey: boolean): string | undefined {
  if (ownKey) return undefined;
  let inputAudio: string | undefined;
  if (given(body.data_sources)) {
    throw new ApiError(400, 'invalid_request', "Invalid 'data_sources': Azure OpenAI On Your Data is not available on this model's shared upstream account; put the retrieved text in the messages instead.", { param: 'data_sources' });
  }
  const messages = Array.isArray(body.messages) ? body.messages : [];
  messages.forEach((m, i) => {
    if (!isRecord(m)) return;
    const audio = m.audio;
    if (isRecord(audio) && given(audio.id)) {
      const param = `messages[${i}].audio.id`;
      throw new ApiError(400, 'invalid_request', `Invalid '${param}': no previous audio response '${String(audio.id).slice(0, 80)}' was found; send the earlier turn as text content instead.`, { param });
    }
    if (!Array.isArray(m.content)) return;
    m.content.forEach((p, j) => {
      if (inputAudio === undefined && isRecord(p) && p.type === 'input_audio') inputAudio = `messages[${i}].content[${j}]`;
      const found = fileIdOf(p);
      if (!found) return;
      const param = `messages[${i}].content[${j}].${found.field}`;
      throw new ApiError(400, 'invalid_request', `No such File object: ${String(found.id).slice(0, 80)}. File ids are not read on this model (its upstream account is shared by every organization; the gateway's own files are batch inputs): send the file itself as base64 data (file_data).`, { param });
    });
  });
  return inputAudio;
}

const given = (v: unknown) => v !== undefined && v !== null;

/**
 * A part's file id and its field, whatever the part's type: `file_id` of the part itself (an
 * `input_file` or `input_image` part; Mistral's `{type: "file", file_id}` chunk, which its preset
 * passes on) or of an object in it (`file.file_id`, OpenAI's file part).
 */
function fileIdOf(p: unknown): { id: unknown; field: string } | undefined {
  if (!isRecord(p)) return undefined;
  if (given(p.file_id)) return { id: p.file_id, field: 'file_id' };
  for (const k in p) {
    const v = Object.hasOwn(p, k) ? p[k] : undefined;
    if (isRecord(v) && given(v.file_id)) return { id: v.file_id, field: `${k}.file_id` };
  }
  return undefined;
}
