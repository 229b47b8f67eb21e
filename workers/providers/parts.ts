/** A canonical content part as the translating adapters read it (its `type` unchecked). */
export type ContentPart = Record<string, unknown> & { type?: unknown };

/** A canonical `image_url` content part's URL: the part's `image_url` string or its `url` (OpenAI's two forms); '' when absent. */
export function imageUrlOf(p: object): string {
  const iu = (p as { image_url?: unknown }).image_url as { url?: unknown } | string | undefined;
  return String((typeof iu === 'string' ? iu : iu?.url) ?? '');
}

/**
 * Each content part of the user and assistant messages, with its field (`messages[i].content[j]`):
 * the parts the Anthropic, Gemini and Bedrock adapters turn into blocks of their own (system,
 * developer and tool messages are read as text). Their refusals of parts walk the request with it.
 */
export function eachPart(messages: unknown, fn: (p: ContentPart, field: string) => void): void {
  if (!Array.isArray(messages)) return;
  messages.forEach((m: { role?: unknown; content?: unknown } | null, i) => {
    if ((m?.role !== 'user' && m?.role !== 'assistant') || !Array.isArray(m.content)) return;
    m.content.forEach((p: unknown, j) => fn((p ?? {}) as ContentPart, `messages[${i}].content[${j}]`));
  });
}
