import { ApiError } from '../../shared/errors/ApiError';
import type { CatalogModel } from '../../shared/catalog/catalog';
import type { ChatJob } from '../../shared/queues/payloads';

type Tool = { type?: unknown; strict?: unknown; function?: { strict?: unknown } } | null;

/**
 * The first field of a request that asks for structured outputs (the catalog's `json_schema`
 * capability): a `json_schema` response format or a strict function tool (OpenAI's Structured
 * Outputs for function calling; Anthropic's strict tool); for the messages dialect's native bypass,
 * `output_config.format` (or the beta's `output_format`) and a strict tool.
 */
export function structuredOutputField(body: Record<string, unknown>, op: ChatJob['operation']): string | undefined {
  const tools = Array.isArray(body.tools) ? (body.tools as Tool[]) : [];
  if (op === 'messages') {
    if ((body.output_config as { format?: unknown } | undefined)?.format) return 'output_config.format';
    if (body.output_format) return 'output_format';
    const i = tools.findIndex((t) => t?.strict === true);
    return i >= 0 ? `tools[${i}].strict` : undefined;
  }
  if ((body.response_format as { type?: unknown } | undefined | null)?.type === 'json_schema') return 'response_format';
  const i = tools.findIndex((t) => t?.type === 'function' && t.function?.strict === true);
  return i >= 0 ? `tools[${i}].function.strict` : undefined;
}

/**
 * A model whose capabilities say `json_schema: false` cannot hold to a schema: a request asking for
 * structured outputs is refused 400 `unsupported_parameter` naming the field, before anything is
 * sent or billed, rather than sent to be refused upstream (or answered without the guarantee).
 */
export function refuseStructuredOutput(model: CatalogModel, body: Record<string, unknown>, op: ChatJob['operation']): void {
  if (model.capabilities.json_schema !== false) return;
  const field = structuredOutputField(body, op);
  if (field) throw new ApiError(400, 'unsupported_parameter', `\`${field}\` asks for structured outputs, which this model does not support.`, { param: field });
}
