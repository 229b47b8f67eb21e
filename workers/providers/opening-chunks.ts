type Chunk = Record<string, unknown>;
type Choice = { index: number; delta: Record<string, unknown>; finish_reason: string | null };

/**
 * The role chunk that opens each streamed choice of a translated upstream (Anthropic, Bedrock,
 * Gemini), as OpenAI sends it: `{role: "assistant", content: ""}` before an answer that opens with
 * text, `content: null` before one that opens with a tool call or reasoning, so the official SDK's
 * accumulated message has the `content` its JSON answer has (null for a turn of tool calls, the
 * text or "" otherwise: the adapters' from-*.ts). It is held until the choice's first chunk, which
 * says which; a choice that finishes with neither text nor tool calls (an empty answer, or reasoning
 * cut at max tokens) gets `content: ""` on its finishing delta. A chunk with an empty delta and
 * nothing else (no finish, no log probabilities) only opens its choice: it brings the role chunk
 * forward (an Anthropic thinking block that starts long before its first delta, or none when its
 * display is omitted) and is not sent itself.
 */
export class OpeningChunks {
  /** Per choice index: whether text (content) or tool calls were sent. */
  private readonly choices = new Map<number, { text: boolean; tools: boolean }>();

  /** `chunks` (each of one choice), with each choice's role chunk before its first. */
  apply(chunks: Chunk[]): Chunk[] {
    const out: Chunk[] = [];
    for (const c of chunks) {
      const choice = (c.choices as Choice[] | undefined)?.[0];
      if (!choice) {
        out.push(c);
        continue;
      }
      const d = choice.delta;
      let s = this.choices.get(choice.index);
      if (!s) {
        const text = typeof d.content === 'string' || (!!choice.finish_reason && !d.tool_calls);
        s = { text, tools: false };
        this.choices.set(choice.index, s);
        const role = { role: 'assistant', content: text ? '' : null };
        out.push({ id: c.id, object: c.object, created: c.created, model: c.model, choices: [{ index: choice.index, delta: role, logprobs: null, finish_reason: null }] });
      }
      if (typeof d.content === 'string') s.text = true;
      if (d.tool_calls) s.tools = true;
      if (choice.finish_reason && !s.text && !s.tools) {
        d.content = '';
        s.text = true;
      }
      if (!choice.finish_reason && !(choice as { logprobs?: unknown }).logprobs && Object.keys(d).length === 0) continue;
      out.push(c);
    }
    return out;
  }
}
