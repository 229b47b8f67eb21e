/**
 * OpenAI's GPT image models (`gpt-image-1`, `gpt-image-1-mini`, `gpt-image-1.5`, `gpt-image-2`, their
 * dated snapshots, `chatgpt-image-latest`: the vendored openapi.json's model enums). They take no
 * `response_format` (OpenAI answers 400 `unknown_parameter`, "Unknown parameter: 'response_format'.",
 * `param: "response_format"`) and always answer base64.
 */
const GPT_IMAGE_NAME = /^(gpt-image|chatgpt-image)/i;

/** Whether an upstream model (or Azure deployment) name is one of OpenAI's GPT image models. */
export const isGptImageName = (upstream: string): boolean => GPT_IMAGE_NAME.test(upstream);
