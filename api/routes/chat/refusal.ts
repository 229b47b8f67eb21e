/**
 * OpenAI's chat completion message always carries `refusal` (null unless the model refused);
 * OpenAI-compatible upstreams and the Anthropic translation may leave it out, and strict clients
 * read the field (docs/dialects.md, "Conformance").
 */
export function withRefusal(result: unknown): unknown {
  const r = result as { choices?: Array<{ message?: Record<string, unknown> }> } | null;
  if (!r || !Array.isArray(r.choices)) return result;
  return { ...r, choices: r.choices.map((c) => (c?.message && !('refusal' in c.message) ? { ...c, message: { ...c.message, refusal: null } } : c)) };
}
