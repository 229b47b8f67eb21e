import { isRecord } from '../../shared/is-record';
import { hasSignature, withoutSignature } from './gemini/call-ids';
import { withJsonKey } from '../../shared/merged';

/**
 * Tool-call ids carrying a Gemini thought signature (`<id>_sig_<signature>`, gemini/call-ids.ts),
 * sent to a deployment of another kind without it. A conversation begun on a Gemini deployment may be
 * continued on another kind (a mixed pool, a fallback, the caller changing models), and those refuse
 * the long ids with a 400:
 *
 * - OpenAI chat completions: `messages[i].tool_calls[j].id` "string too long. Expected a string with
 *   maximum length 40" (error code `string_above_max_length`; vercel/ai issue 5171, microsoft/autogen
 *   issue 6377), and Azure OpenAI with it;
 * - Bedrock Converse: `toolUseId` of ToolUseBlock and ToolResultBlock, "Length Constraints: Minimum
 *   length of 1. Maximum length of 64. Pattern: ^[a-zA-Z0-9_-]+$" (AWS Bedrock API Reference);
 * - Anthropic: `tool_use.id` and `tool_result.tool_use_id` match `^[a-zA-Z0-9_-]+$`; no length limit is
 *   documented, but the signature means nothing there either.
 *
 * The head is kept (withoutSignature), so a call and its result still pair. Nothing is copied when no
 * id carries a signature: one pass over the messages reading their ids, the request's own body sent on.
 */
export function withoutSignedCallIds(operation: string, body: Record<string, unknown>): Record<string, unknown> {
  const messages = body.messages;
  if (!Array.isArray(messages)) return body;
  if (operation === 'chat') return messages.some(chatSigned) ? withJsonKey(body, 'messages', messages.map(chatUnsigned)) : body;
  if (operation === 'messages') return messages.some(blocksSigned) ? withJsonKey(body, 'messages', messages.map(blocksUnsigned)) : body;
  return body;
}

const signed = (id: unknown): id is string => typeof id === 'string' && hasSignature(id);

/** A canonical (chat) message with a signed id: an assistant's tool call, a tool result's, a user message's `tool_media` (tool-results.ts). */
function chatSigned(m: unknown): boolean {
  if (!isRecord(m)) return false;
  if (signed(m.tool_call_id)) return true;
  if (Array.isArray(m.tool_calls) && m.tool_calls.some((c) => isRecord(c) && signed(c.id))) return true;
  return Array.isArray(m.tool_media) && m.tool_media.some(signed);
}

function chatUnsigned(m: unknown): unknown {
  if (!chatSigned(m)) return m;
  const out: Record<string, unknown> = { ...(m as object) };
  if (signed(out.tool_call_id)) out.tool_call_id = withoutSignature(out.tool_call_id);
  if (Array.isArray(out.tool_calls)) out.tool_calls = out.tool_calls.map((c) => (isRecord(c) && signed(c.id) ? withJsonKey(c, 'id', withoutSignature(c.id)) : c));
  if (Array.isArray(out.tool_media)) out.tool_media = out.tool_media.map((id) => (signed(id) ? withoutSignature(id) : id));
  return out;
}

/** A messages-dialect message (the Anthropic bypass) with a signed `tool_use` id or `tool_result` `tool_use_id`. */
function blocksSigned(m: unknown): boolean {
  return isRecord(m) && Array.isArray(m.content) && m.content.some((b) => blockIdKey(b) !== undefined);
}

/** Which key of a block holds a signed id: a `tool_use` block's `id`, a `tool_result` block's `tool_use_id`. */
function blockIdKey(b: unknown): 'id' | 'tool_use_id' | undefined {
  if (!isRecord(b)) return undefined;
  if (b.type === 'tool_use') return signed(b.id) ? 'id' : undefined;
  return b.type === 'tool_result' && signed(b.tool_use_id) ? 'tool_use_id' : undefined;
}

function blocksUnsigned(m: unknown): unknown {
  if (!blocksSigned(m)) return m;
  const message = m as Record<string, unknown>;
  const content = (message.content as unknown[]).map((b) => {
    const key = blockIdKey(b);
    return key ? withJsonKey(b as Record<string, unknown>, key, withoutSignature((b as Record<string, string>)[key])) : b;
  });
  return withJsonKey(message, 'content', content);
}
