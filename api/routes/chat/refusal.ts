/**
 * OpenAI's chat completion message always carries `refusal` (null unless the model refused) and
 * `annotations` (its API document's ChatCompletionResponseMessage: an array, `[]` when there are
 * none, url_citation entries for a web search's sources; every example in the document has it);
 * OpenAI-compatible upstreams and the translations (Anthropic, Gemini, Bedrock) may leave them out,
 * and strict clients read the fields (docs/dialects.md, "Conformance"). An upstream's own are kept.
 */
export function withRefusal(result: unknown): unknown {
  const r = result as { choices?: Array<{ message?: Record<string, unknown> }> } | null;
  if (!r || !Array.isArray(r.choices)) return result;
  // set on the answer itself (it is this request's own, parsed from its reply): copies made by spreads
  // would each get a hidden class of their own (shared/merged.ts)
  for (const c of r.choices) {
    if (!c?.message) continue;
    if (!('refusal' in c.message)) c.message.refusal = null;
    if (!Array.isArray(c.message.annotations)) c.message.annotations = [];
  }
  return r;
}
