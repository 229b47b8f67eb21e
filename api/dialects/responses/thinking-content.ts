import { isThinkingBlock, type ThinkingBlock } from '../../../workers/providers/anthropic/thinking';
import type { ResponsesRequest } from './request';

/**
 * A reasoning item's `encrypted_content` for an Anthropic-native upstream's turn: its signed thinking
 * blocks (text, signature; redacted blocks' data), whole and in order, behind a prefix that names
 * them as Anthropic's, so that they are never mistaken for another provider's encrypted reasoning
 * (OpenAI's own is not of this form) and go back only to an Anthropic-native upstream. Opaque to
 * the client; Anthropic checks the signatures themselves.
 */
const PREFIX = 'anthropic-signed-thinking.v1.';

export function encryptedThinking(blocks: ThinkingBlock[]): string {
  return PREFIX + Buffer.from(JSON.stringify(blocks)).toString('base64url');
}

/** The blocks of an `encrypted_content` made by encryptedThinking; undefined for any other value (another provider's, or altered). */
export function thinkingOfEncrypted(v: unknown): ThinkingBlock[] | undefined {
  if (typeof v !== 'string' || !v.startsWith(PREFIX)) return undefined;
  try {
    const blocks = JSON.parse(Buffer.from(v.slice(PREFIX.length), 'base64url').toString('utf8')) as unknown;
    return Array.isArray(blocks) && blocks.length && blocks.every(isThinkingBlock) ? blocks : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the request asked for reasoning items' `encrypted_content` (`include: ["reasoning.encrypted_content"]`, as OpenAI has it). */
export const wantsEncryptedReasoning = (req: Pick<ResponsesRequest, 'include'> | undefined) => Array.isArray(req?.include) && req.include.includes('reasoning.encrypted_content');

/** The `encrypted_content` field of a reasoning item of these blocks, when asked for and there are any. */
export function encryptedField(blocks: ThinkingBlock[] | undefined, req: Pick<ResponsesRequest, 'include'> | undefined): { encrypted_content?: string } {
  return blocks?.length && wantsEncryptedReasoning(req) ? { encrypted_content: encryptedThinking(blocks) } : {};
}

const signedOf = new WeakMap<object, ThinkingBlock[]>();

/** Notes the signed blocks a reasoning item was made of (with or without its `encrypted_content`), for its conversation (keptItem). */
export function noteSignedThinking<T extends object>(item: T, blocks: ThinkingBlock[] | undefined): T {
  if (blocks?.length) signedOf.set(item, blocks);
  return item;
}

/**
 * An output item as a conversation keeps it: a reasoning item made of signed thinking carries it as
 * its `encrypted_content` whether or not the request asked for it, as OpenAI's conversations keep
 * reasoning items whole; the Conversations API shows it only when asked (api/routes/responses/include.ts).
 */
export function keptItem<T extends Record<string, unknown>>(item: T): T {
  const blocks = signedOf.get(item);
  return blocks && item.encrypted_content === undefined ? { ...item, encrypted_content: encryptedThinking(blocks) } : item;
}
