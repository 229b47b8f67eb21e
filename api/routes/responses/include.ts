import type { Request } from 'express';
import { ApiError } from '../../../shared/errors/ApiError';
import { INCLUDABLE } from './schema';
import { shownReasoning, withShownOutput } from '../../dialects/responses/client-view';
import { merged } from '../../../shared/merged';
import { queryValues } from '../batches/gate';

type Json = Record<string, unknown>;

/**
 * The `include` query parameter of the routes that show stored items: `GET /v1/responses/{id}` and
 * `GET /v1/responses/{id}/input_items` (OpenAI's ResponseRetrieveParams, InputItemListParams) and the
 * Conversations API's item routes (ItemListParams, ItemRetrieveParams, ItemCreateParams): an array of
 * ResponseIncludable, as `include[]=…` (the official SDKs' form) or `include=…`, once or repeated; a
 * value that is not includable is a 400.
 */
export function includeOf(req: Request): string[] {
  const given = queryValues(req.query, 'include');
  for (const v of given) {
    if (typeof v !== 'string' || !(INCLUDABLE as readonly string[]).includes(v)) {
      throw new ApiError(400, 'invalid_request', `'include' takes ${INCLUDABLE.join(', ')}; got ${JSON.stringify(v)}.`, { param: 'include' });
    }
  }
  return given as string[];
}

/** Whether `logprobs` (an output_text part's, or a streamed output_text event's) is shown empty: it has some, and `include` does not ask for them. */
const hiddenLogprobs = (logprobs: unknown, include: string[]) => Array.isArray(logprobs) && logprobs.length > 0 && !include.includes('message.output_text.logprobs');

/** A message's content part as shown: its log probabilities and an input image's URL only when asked for. */
function shownPart(p: unknown, include: string[]): unknown {
  const part = p as Json | null;
  if (part?.type === 'output_text' && hiddenLogprobs(part.logprobs, include)) return { ...part, logprobs: [] };
  if (part?.type === 'input_image' && typeof part.image_url === 'string' && !include.includes('message.input_image.image_url')) return { ...part, image_url: null };
  return p;
}

/**
 * A stored item (a response's output or input item, a conversation's item) as it is shown: what
 * OpenAI's `include` adds is there only when `include` asks for it, whatever the request that made
 * it asked. A reasoning item's `encrypted_content` (always built and kept whole:
 * dialects/responses/client-view.ts) with `reasoning.encrypted_content`; an `output_text` part's `logprobs`
 * (empty otherwise, as in an answer that did not ask) with `message.output_text.logprobs`; an
 * `input_image` part's `image_url` (null otherwise) with `message.input_image.image_url`.
 */
export function shownItem(item: Json, include: string[]): Json {
  if (item.type === 'reasoning') return shownReasoning(item, include);
  if (item.type !== 'message' || !Array.isArray(item.content)) return item;
  const content = item.content.map((p) => shownPart(p, include));
  return content.some((p, i) => p !== (item.content as unknown[])[i]) ? { ...item, content } : item;
}

/** A stored Response as `GET /v1/responses/{id}` shows it: its output items as shownItem shows them. */
export function shownResponse(response: Json, include: string[]): Json {
  return withShownOutput(response, (i) => shownItem(i, include));
}

/**
 * A background stream's event (kept whole: background-stream.ts) as `GET /v1/responses/{id}?stream=true`
 * shows it, as the JSON retrieve shows the Response: its `item`, content `part` and `response` as
 * shownItem shows them, and an output_text event's own `logprobs` (`response.output_text.delta`,
 * `.done`) empty unless `include` asks; the event itself when nothing changed.
 */
export function shownEvent(ev: Json, include: string[]): Json {
  const shown: Json = {};
  if (ev.item && typeof ev.item === 'object') shown.item = shownItem(ev.item as Json, include);
  if (ev.part !== undefined) shown.part = shownPart(ev.part, include);
  if (ev.response && typeof ev.response === 'object') shown.response = shownResponse(ev.response as Json, include);
  if (hiddenLogprobs(ev.logprobs, include)) shown.logprobs = [];
  return Object.keys(shown).some((k) => shown[k] !== ev[k]) ? merged(ev, shown) : ev;
}
