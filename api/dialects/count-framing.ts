/**
 * The framing a local token count adds to the text it counts (both count endpoints: the messages
 * dialect's `count_tokens` and the responses dialect's `input_tokens`), as OpenAI-style chat formats
 * add it: a few tokens per request and per message for roles and boundaries.
 */
export const PER_MESSAGE_TOKENS = 3;
export const PER_REQUEST_TOKENS = 3;
