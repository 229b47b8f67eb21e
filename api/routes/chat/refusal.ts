/**
 * OpenAI's chat completion message always carries `refusal` (null unless the model refused);
 * OpenAI-compatible upstreams and the Anthropic translation may leave it out, and strict clients
 * read the field (docs/dialects.md, "Conformance").
 */
export function withRefusal(result: unknown): unknown {
  const r = result as { choices?: Array<{ message?: Record<string, unknown> }> } | null;
  if (!r || !Array.isArray(r.choices)) return result;
  // set on the answer itself (it is this request's own, parsed from its reply): copies made by spreads
  // would each get a hidden class of their own (shared/merged.ts)
  for (const c of r.choices) if (c?.message && !('refusal' in c.message)) c.message.refusal = null;
  return r;
}
