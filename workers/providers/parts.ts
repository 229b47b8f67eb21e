/** A canonical `image_url` content part's URL: the part's `image_url` string or its `url` (OpenAI's two forms); '' when absent. */
export function imageUrlOf(p: object): string {
  const iu = (p as { image_url?: unknown }).image_url as { url?: unknown } | string | undefined;
  return String((typeof iu === 'string' ? iu : iu?.url) ?? '');
}
