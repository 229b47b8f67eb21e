import { encode } from 'gpt-tokenizer';

export function countTokens(text: string): number {
  return text ? encode(text).length : 0;
}

/** Text of a chat message content (string or parts). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : ''))
      .join(' ');
  }
  return '';
}

/**
 * The simulated reply: deterministic from the prompt. It echoes the last user words so tests can
 * see their input went through, then pads to `words` words.
 */
export function replyWords(prompt: string, words = 12, maxTokens?: number): string[] {
  const echo = prompt.split(/\s+/).filter(Boolean).slice(0, 24);
  const out = ['Simulated', 'reply:', ...echo];
  const filler = ['lorem', 'ipsum', 'dolor', 'sit', 'amet', 'consectetur', 'adipiscing', 'elit'];
  for (let i = 0; out.length < Math.max(words, 3); i++) out.push(filler[i % filler.length]);
  const cap = maxTokens && maxTokens > 0 ? maxTokens : Infinity;
  return out.slice(0, Math.min(out.length, cap));
}
