import { ApiError } from './ApiError';

/**
 * How upstreams say that a request does not fit the model's context window, besides OpenAI's own
 * code `context_length_exceeded` (OpenAI, Azure, and the OpenAI-compatible servers that copy it):
 * - "This model's maximum context length is N tokens…" (OpenAI's chat wording, vLLM, Groq, Together…);
 * - "prompt is too long: N tokens > M maximum" (Anthropic, Claude on Bedrock), "input length and
 *   `max_tokens` exceed context limit" (Anthropic), "Input is too long for requested model." (Bedrock);
 * - "exceeds the context window" (OpenAI's Responses wording), "exceeds the available context size"
 *   (llama.cpp, whose error type is `exceed_context_size_error`);
 * - "The input token count (N) exceeds the maximum number of tokens allowed (M)." (Gemini);
 * - "…is longer than the model's context length…" (SGLang).
 */
const WORDINGS = [
  /maximum context length/i,
  /prompt is too long/i,
  /exceeds? (?:the )?(?:available )?context (?:limit|window|size)/i,
  /input is too long/i,
  /input token count.*exceeds the maximum number of tokens/i,
  /longer than the model's (?:maximum )?context length/i,
];
const CODES = new Set(['context_length_exceeded', 'exceed_context_size_error']);

/** Whether an upstream's refusal (its error code or type, and its message) says the input does not fit the model's context window. */
export function contextWindowExceeded(code: string | undefined, message: string): boolean {
  return (code !== undefined && CODES.has(code)) || WORDINGS.some((w) => w.test(message));
}

/**
 * OpenAI's answer to an input longer than the model's context window: 400 `context_length_exceeded`
 * with its own words (which clients such as Codex read by the code to tell the user the context is
 * full, rather than retry or show an unknown refusal), then the upstream's (which keeps what clients
 * that read the wording look for: Anthropic's "prompt is too long"). The field is the chat form's
 * `messages` (the responses dialect names it `input`: api/middleware/error-body.ts).
 */
const OPENAI_WORDS = 'Your input exceeds the context window of this model. Please adjust your input and try again. Upstream: ';

export function contextTooLong(upstreamMessage: string): ApiError {
  return new ApiError(400, 'context_length_exceeded', `${OPENAI_WORDS}${upstreamMessage}`, { param: 'messages' });
}

/**
 * The same refusal in Anthropic's words, for the messages dialect: "prompt is too long: …" (Anthropic's
 * message, kept as the upstream wrote it when it is Anthropic's, such as "prompt is too long: 208310
 * tokens > 200000 maximum", which Claude Code reads), else those words before the upstream's.
 */
export function promptTooLongWording(message: string): string {
  const upstream = message.startsWith(OPENAI_WORDS) ? message.slice(OPENAI_WORDS.length) : message;
  return /^prompt is too long/i.test(upstream) ? upstream : `prompt is too long: ${upstream}`;
}
