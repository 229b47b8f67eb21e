import { ApiError } from '../../../shared/errors/ApiError';
import { given, type MessagesScan } from './messages-scan';

/**
 * Ids a chat completions body may name that an OpenAI-compatible upstream (openai, azure: the body is
 * sent as written, workers/providers/openai/chatComplete.ts) resolves in the account of the key it is
 * called with. On the platform's credential that account is shared by every organization (and the
 * operator), so such an id would reach what another organization left there. Unless the caller pays
 * with its own provider key (passthrough, api/dispatch/passthrough.ts: that account is its own; the
 * route does not call this then), each is refused 400 before a lane, a budget or the upstream is
 * reached (docs/security.md, "Ids an upstream resolves"). Checked against OpenAI's API document (test/fixtures/vendor/openai/openapi.json):
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
 * The messages' ids are found by the one pass over their parts (messages-scan.ts), which the audio
 * check reads too.
 */
export function refuseSharedAccountIds(body: Record<string, unknown>, scan: MessagesScan): void {
  if (given(body.data_sources)) {
    throw new ApiError(400, 'invalid_request', "Invalid 'data_sources': Azure OpenAI On Your Data is not available on this model's shared upstream account; put the retrieved text in the messages instead.", { param: 'data_sources' });
  }
  const named = scan.sharedId;
  if (!named) return;
  const { param } = named;
  if (named.kind === 'audio') {
    throw new ApiError(400, 'invalid_request', `Invalid '${param}': no previous audio response '${String(named.id).slice(0, 80)}' was found; send the earlier turn as text content instead.`, { param });
  }
  throw new ApiError(400, 'invalid_request', `No such File object: ${String(named.id).slice(0, 80)}. File ids are not read on this model (its upstream account is shared by every organization; the gateway's own files are batch inputs): send the file itself as base64 data (file_data).`, { param });
}
