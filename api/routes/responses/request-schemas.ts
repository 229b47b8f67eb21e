import { isRecord } from '../../../shared/is-record';
import type { ResponsesRequest } from '../../dialects/responses/request';
import { refuseInvalidResponseSchema, refuseInvalidToolSchemas } from '../../../shared/json-schema/tool-schemas';

/**
 * Every JSON Schema of a Responses request that reaches the model, checked as OpenAI checks it
 * (shared/json-schema/tool-schemas.ts), before anything is looked up, sent or billed: the function tools of `tools` (`tools[N].parameters`, a namespace member's
 * `tools[N].tools[M].parameters`); those an input item loads, `additional_tools` and
 * `tool_search_output` (client or server run: OpenAI's AdditionalToolsItemParam and
 * ToolSearchOutputItemParam type their `tools` as `tools` is typed), at `input[N].tools[M].parameters`;
 * a `configuration_update` item's json_schema format (OpenAI's ResponseConfigurationUpdateItemParam
 * takes the format `text.format` takes) at `input[N].text.format.schema`; and `text.format`'s
 * (`text.format.schema`). The places in an item are inferred: OpenAI's refusals of a loaded tool's
 * schema or of an update's format were not found quoted, but its API names a field of an item's tool by
 * the item, "Invalid 'input[0].tools[0].name': string too long. ..." (as a public record of probes of
 * its Responses backend quotes it, 2026-10, found with the search tool's find_string), so the same
 * prefix is given to these. Items before a `compaction` item are checked too, though the model no
 * longer sees them: OpenAI checks the request as sent. `text`: left out on `POST
 * /v1/responses/compact`, whose summary pass is made without it (api/dispatch/summarise.ts).
 */
export function refuseInvalidResponsesSchemas(body: Pick<ResponsesRequest, 'tools' | 'input'> & Partial<Pick<ResponsesRequest, 'text'>>): void {
  if (body.tools !== undefined) refuseInvalidToolSchemas(body.tools, 'responses');
  if (Array.isArray(body.input)) {
    for (const [i, item] of body.input.entries()) {
      if (item.type === 'additional_tools' || item.type === 'tool_search_output') refuseInvalidToolSchemas(item.tools, 'responses', `input[${i}].tools`);
      else if (item.type === 'configuration_update' && isRecord(item.text)) refuseInvalidResponseSchema(item.text.format, 'responses', `input[${i}].text.format.schema`);
    }
  }
  if (body.text?.format) refuseInvalidResponseSchema(body.text.format, 'responses');
}
