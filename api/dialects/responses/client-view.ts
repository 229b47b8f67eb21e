import type { ResponsesRequest } from './request';
import { merged } from '../../../shared/merged';

type Json = Record<string, unknown>;

/**
 * What a client is shown of a reasoning item: its `encrypted_content` only when its `include` (the
 * create's, or a GET's own: api/routes/responses/include.ts) has `reasoning.encrypted_content`. The
 * gateway builds, stores and keeps in conversations every reasoning item whole (an Anthropic-native
 * turn's signed thinking as its `encrypted_content`, thinking-content.ts, whatever was asked), so
 * that any copy of it still carries the blocks; this is the one place the field is left out.
 */
export function shownReasoning(item: Json, include: readonly string[] | undefined): Json {
  if (item.type !== 'reasoning' || item.encrypted_content === undefined || include?.includes('reasoning.encrypted_content')) return item;
  const { encrypted_content: _kept, ...shown } = item;
  return shown;
}

/** The `include` of a create request's body. */
const bodyInclude = (req: Pick<ResponsesRequest, 'include'> | undefined) => (Array.isArray(req?.include) ? req.include : undefined);

/** A Response with each output item as `show` shows it; the Response itself when no item changed. */
export function withShownOutput(response: Json, show: (item: Json) => Json): Json {
  const output = response.output;
  if (!Array.isArray(output)) return response;
  const shown = output.map((i) => show(i as Json));
  return shown.some((i, n) => i !== output[n]) ? merged(response, { output: shown }) : response;
}

/** A Response as the client of `POST /v1/responses` gets it (JSON, or in a streamed event): its output items as shownReasoning shows them to the request's `include`. */
export function answeredResponse(response: Json, req: Pick<ResponsesRequest, 'include'> | undefined): Json {
  const include = bodyInclude(req);
  return withShownOutput(response, (i) => shownReasoning(i, include));
}

/** A streamed event's fields as the client gets them: its `item` (output_item.added/done) and its `response` (response.created … completed/incomplete/failed) as answered. */
export function answeredFields(fields: Json, req: Pick<ResponsesRequest, 'include'> | undefined): Json {
  let shown = fields;
  if (fields.item && typeof fields.item === 'object') {
    const item = shownReasoning(fields.item as Json, bodyInclude(req));
    if (item !== fields.item) shown = merged(shown, { item });
  }
  if (fields.response && typeof fields.response === 'object') {
    const response = answeredResponse(fields.response as Json, req);
    if (response !== fields.response) shown = merged(shown, { response });
  }
  return shown;
}
