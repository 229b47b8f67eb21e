import { ApiError } from '../../../shared/errors/ApiError';

type Part = { type?: string; file?: { file_data?: unknown } };

/**
 * A document given by URL (the messages dialect's `url` source, the Responses dialect's `file_url`)
 * reaches the chat adapter as `file_data`, which OpenAI's chat completions read as base64 data only:
 * refused, naming the part, before anything is sent or billed (the upstream's own 400 would blame the
 * caller's field by another name). The OpenAI-compatible chat adapters (openai, azure) refuse with it,
 * and routing asks it of their deployments (api/dispatch/route.ts).
 */
export function refuseFileUrls(body: Record<string, unknown>): void {
  const messages = Array.isArray(body.messages) ? (body.messages as Array<{ content?: unknown }>) : [];
  messages.forEach((m, i) => {
    if (!Array.isArray(m?.content)) return;
    (m.content as Part[]).forEach((p, j) => {
      if (p?.type === 'file' && typeof p.file?.file_data === 'string' && /^https?:\/\//i.test(p.file.file_data)) {
        const param = `messages[${i}].content[${j}]`;
        throw new ApiError(400, 'unsupported_parameter', `\`${param}\`: a document by URL is not supported on this model; send its bytes as base64 data.`, { param });
      }
    });
  });
}
