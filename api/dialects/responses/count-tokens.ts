import type { CanonicalRequest } from '../canonical';
import { countTokens, countTokensAtMost } from '../../../shared/tokenizer/pool';
import { DOCUMENT_TOKENS, IMAGE_TOKENS, mediaTokens } from '../../../shared/tokenizer/media';
import { PER_MESSAGE_TOKENS, PER_REQUEST_TOKENS } from '../count-framing';

/**
 * Input tokens of a responses request, counted on the canonical request it becomes (instructions, the
 * history a `previous_response_id` brings, the input items; the way `count_tokens` counts a messages
 * request): every message's text, tool calls (name and arguments) and tool outputs, and the tool
 * definitions (JSON of name, description, parameters), plus the per-request and per-message framing
 * and estimates for images, files and audio clips (by their duration). Large inputs are counted off the event loop (pool.ts).
 * `atMost`: for a decision an over-count only makes more careful (a trigger, truncation), a count not
 * finished in time is the texts' bytes (countTokensAtMost) instead of TokenCountTimeout.
 */
export async function countCanonicalTokens(profile: string | undefined, req: CanonicalRequest, atMost = false): Promise<number> {
  const texts: string[] = [];
  let fixed = PER_REQUEST_TOKENS;
  for (const m of req.messages) {
    fixed += PER_MESSAGE_TOKENS;
    if (typeof m.content === 'string') texts.push(m.content);
    else
      for (const p of m.content ?? []) {
        if (p.type === 'text') texts.push(p.text);
        else if (p.type === 'image_url') fixed += IMAGE_TOKENS;
        else fixed += mediaTokens(p as unknown as Record<string, unknown>) || DOCUMENT_TOKENS;
      }
    for (const c of m.tool_calls ?? []) texts.push(`${c.function.name} ${c.function.arguments}`);
  }
  for (const t of req.tools ?? []) texts.push(JSON.stringify({ name: t.function.name, description: t.function.description, parameters: t.function.parameters }));
  return fixed + (atMost ? await countTokensAtMost(profile, texts) : ((await countTokens(profile, texts)) as number));
}
