import { isThinkingBlock, type ThinkingBlock } from '../../../workers/providers/anthropic/thinking';

/**
 * A reasoning item's `encrypted_content` for a Claude upstream's turn (Anthropic-native or Bedrock):
 * its signed thinking blocks (text, signature; redacted blocks' data), whole and in order, behind a
 * prefix that names them as Anthropic's, so that they are never mistaken for another provider's
 * encrypted reasoning (OpenAI's own is not of this form) and go back only to a Claude upstream, of
 * either kind (Anthropic documents the signatures as portable across platforms: docs/routing.md).
 * Opaque to the client; Anthropic checks the signatures themselves. Every reasoning item of such a turn is
 * built with it (response.ts, reasoningItem), so the item carries its blocks wherever it is copied
 * (stored, kept in a conversation); a client is shown it only when its `include` asks (client-view.ts).
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
