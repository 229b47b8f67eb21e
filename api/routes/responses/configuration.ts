import { updatesIn, type Configuration, type ResponsesRequest } from '../../dialects/responses/request';

const earlierOf = new WeakMap<object, Configuration>();

/**
 * The settings the history's `configuration_update` items left in effect (the previous response's,
 * kept with it: store.ts, or the conversation's items), carried into the request: each set one
 * replaces the request's own `reasoning.effort` or `text.format`, so that the response is made with
 * it and its Response echoes it (request.ts configuredBy); the request's own updates still come after.
 */
export function carryConfiguration(body: ResponsesRequest, earlier: Configuration | null | undefined): void {
  if (!earlier) return;
  earlierOf.set(body, earlier);
  if (earlier.effort !== undefined) body.reasoning = Object.assign({}, body.reasoning, { effort: earlier.effort });
  if (earlier.format) body.text = Object.assign({}, body.text, { format: earlier.format });
}

/** The settings updates leave in effect after this request: the history's, then its input's (kept with a stored response for a follow-up). */
export const configurationAfter = (body: { input?: ResponsesRequest['input'] }): Configuration => updatesIn(body.input, earlierOf.get(body));
