import type { IncomingHttpHeaders } from 'http';
import type { ApiError } from '../../shared/errors/ApiError';
import { anthropicErrorType } from '../dialects/messages/errors';
import { merged } from '../../shared/merged';
import { promptTooLongWording } from '../../shared/errors/context-window';

/** The path-authentication prefixes an inference path may sit under (`/a/{key}`, `/a/{key}/p/{project}`, `/r/{plan}`). */
const PREFIX = String.raw`^(?:/a/[^/]+(?:/p/[^/]+)?|/r/[^/]+)?`;
/** Paths of the OpenAI dialects (matched as Express routes them, ignoring case): OpenAI clients read `error.type` and `error.param`. */
const OPENAI_PATH = new RegExp(`${PREFIX}/(?:v1/(?:chat/completions|completions|responses|conversations|embeddings|models|images|audio|files|batches)|responses)(?:/|$)`, 'i');
/** The responses dialect's paths (`/v1/responses…`, `/responses…`). */
const RESPONSES_PATH = new RegExp(`${PREFIX}/(?:v1/)?responses(?:/|$)`, 'i');
/**
 * A refusal made on the canonical (chat) form of a responses request (an adapter's, a routing check's)
 * names the chat field; the responses client sent the field of its own API that became it.
 */
const RESPONSES_PARAM = new Map([
  ['max_completion_tokens', 'max_output_tokens'],
  ['max_tokens', 'max_output_tokens'],
  ['reasoning_effort', 'reasoning.effort'],
  ['response_format', 'text.format'],
  ['verbosity', 'text.verbosity'],
  ['messages', 'input'],
  ['functions', 'tools'],
  ['web_search_options', 'tools'],
]);

/**
 * A refusal made on the canonical (chat) form of a messages request (a translating adapter's: Gemini's,
 * Bedrock's) names the chat field; the message names the messages field that became it, since an
 * Anthropic client sent no such field and its errors carry no `param` (api/dialects/messages/request.ts
 * messagesToCanonical). Before, `tool_choice.disable_parallel_tool_use` on Gemini or Bedrock was refused
 * as "`parallel_tool_calls` cannot be switched off on this model."
 */
const MESSAGES_PARAM = new Map([
  ['parallel_tool_calls', 'tool_choice.disable_parallel_tool_use'],
  ['max_completion_tokens', 'max_tokens'],
  ['stop', 'stop_sequences'],
  ['reasoning_effort', 'output_config.effort'],
  ['response_format', 'output_config.format'],
  ['user', 'metadata.user_id'],
]);

/**
 * An error's message with a leading chat field name (`` `parallel_tool_calls` ``) as the messages dialect
 * names it (MESSAGES_PARAM); an input past the context window in Anthropic's words (context-window.ts).
 */
function messagesWording(err: ApiError, message: unknown): unknown {
  if (err.code === 'context_length_exceeded' && typeof message === 'string') return promptTooLongWording(message);
  const field = err.param ? MESSAGES_PARAM.get(err.param) : undefined;
  const chat = `\`${err.param}\``;
  return field && typeof message === 'string' && message.startsWith(chat) ? `\`${field}\`${message.slice(chat.length)}` : message;
}

/** The messages dialect's paths: Anthropic clients read `error.type`. */
const MESSAGES_PATH = new RegExp(`${PREFIX}/v1/messages(?:/|$)`, 'i');
/** The model list and model get, which answer Anthropic's Models API to a client that sends `anthropic-version` (api/routes/models/router.ts). */
const MODELS_PATH = new RegExp(`${PREFIX}/v1/models(?:/|$)`, 'i');

/** Whether the client asked in the messages dialect's terms: it sent `anthropic-version`, as the Anthropic SDK does on every request. */
export const sentAnthropicVersion = (headers: IncomingHttpHeaders): boolean => !!headers['anthropic-version'];

/**
 * Whether an answer on `path` is in the messages dialect: its own paths, and the model routes asked
 * with `anthropic-version` (their answers are then Anthropic's Models API, so their errors are too).
 */
function messagesDialect(path: string, headers: IncomingHttpHeaders): boolean {
  return MESSAGES_PATH.test(path) || (MODELS_PATH.test(path) && sentAnthropicVersion(headers));
}
/** The management API: its envelope names the field at fault (`param`) when there is one (docs/admin.md). */
const MANAGEMENT_PATH = /^\/admin\/v1(?:\/|$)/i;

/**
 * OpenAI's error `type` for an HTTP status, as its API answers: a 401 (`invalid_api_key`: "Incorrect
 * API key provided") and a 404 (`model_not_found`, "No such File object", a missing response) are
 * `invalid_request_error`, as every other 4xx but these: 402 (a budget or the wallet refused the
 * money: `budget_exceeded`, `insufficient_credits`, `reservation_too_large`) is `insufficient_quota`,
 * the type OpenAI gives its own spend-limit and credit refusals (it sends them as 429; the spec keeps
 * 402, and `code` says which); 403 `permission_error`; 429 `rate_limit_error`; 5xx `server_error`.
 */
export function openaiErrorType(status: number): string {
  if (status === 402) return 'insufficient_quota';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/**
 * The body of an error answer: the spec's envelope `{ error: { code, message } }` everywhere, plus
 * the fields the dialect's official clients read where the path is a dialect's (docs/dialects.md,
 * "Conformance"): OpenAI's `type` and `param`, Anthropic's `type`; the management API's adds `param`
 * (the field at fault) when it is known. `headers`: the request's (an `anthropic-version` makes the
 * model routes Anthropic's).
 */
export function errorBody(path: string, err: ApiError, headers: IncomingHttpHeaders = {}): { error: Record<string, unknown> } {
  const error = err.toJSON();
  if (messagesDialect(path, headers)) return { error: merged(error, { message: messagesWording(err, error.message), type: anthropicErrorType(err.status) }) };
  if (OPENAI_PATH.test(path)) return { error: openaiError(err, RESPONSES_PATH.test(path)) };
  if (err.param && MANAGEMENT_PATH.test(path)) return { error: merged(error, { param: err.param }) };
  return { error };
}

/** The `error` object of an OpenAI-dialect answer, HTTP or in-band in a stream; `responses`: the param as the responses dialect names it (RESPONSES_PARAM). */
export function openaiError(err: ApiError, responses = false): Record<string, unknown> {
  const param = err.param ?? null;
  return merged(err.toJSON(), { type: openaiErrorType(err.status), param: responses && param ? (RESPONSES_PARAM.get(param) ?? param) : param });
}
