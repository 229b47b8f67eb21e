import type { CanonicalMessage } from '../../dialects/canonical';

/**
 * Whether the model may fetch `url`: as Anthropic's web fetch tool allows, only a URL the
 * conversation gave it (the user's or system's text, a tool result, an earlier search or fetch
 * result), never one the model made up (its own text does not count): a page the model read cannot
 * have it send the conversation to an address it builds. Compared as written, without a trailing
 * slash or a fragment (`https://example.com` in the text allows `https://example.com/`).
 */
export function fetchableUrl(url: string, messages: readonly CanonicalMessage[]): boolean {
  const forms = new Set([url, url.replace(/#.*$/, '')]);
  for (const f of [...forms]) forms.add(f.replace(/\/+$/, ''));
  forms.delete('');
  for (const m of messages) {
    if (m.role === 'assistant') continue;
    for (const text of textsOf(m)) for (const f of forms) if (text.includes(f)) return true;
  }
  return false;
}

function textsOf(m: CanonicalMessage): string[] {
  if (typeof m.content === 'string') return [m.content];
  if (!Array.isArray(m.content)) return [];
  return m.content.flatMap((p) => (p.type === 'text' ? [p.text] : []));
}
