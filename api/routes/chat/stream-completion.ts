type Json = Record<string, unknown>;

interface ToolCall {
  index: number;
  id?: string;
  type: string;
  function: { name: string; arguments: string };
}

interface Choice {
  index: number;
  message: { role: string; content: string | null; refusal: string | null; annotations: unknown[]; tool_calls?: ToolCall[]; reasoning_content?: string; thinking_blocks?: unknown[] };
  finish_reason: string | null;
  logprobs: Logprobs | null;
  /** vLLM's matched stop sequence (also the Anthropic and Bedrock translations'), as the JSON answer's choice has it. */
  stop_reason?: string;
  /** The upstream's own stop reason where chat's has no word for it (`model_context_window_exceeded`, from the Anthropic and Bedrock translations). */
  native_finish_reason?: string;
  /** An Anthropic upstream's refusal details (`stop_details`, its adapter's refusalDetailsOf), as the JSON answer's choice has them. */
  stop_details?: unknown;
}

/** OpenAI's ChatCompletion.Choice.Logprobs: the tokens' log probabilities of the content and of a refusal. */
interface Logprobs {
  content: unknown[] | null;
  refusal: unknown[] | null;
}

/**
 * The `chat.completion` a stream of `chat.completion.chunk`s adds up to, for a streamed request made
 * with `store: true` (what OpenAI stores for one): each choice's content, refusal and tool calls
 * (merged by their index, the arguments concatenated, the name and id as the last delta gave them, as
 * the official SDK's ChatCompletionStream takes them), its `annotations` (those the deltas carried, else
 * `[]`, as a JSON answer has them: refusal.ts), the reasoning an upstream streamed
 * (`reasoning_content` concatenated, a Claude upstream's signed `thinking_blocks` in order, as its
 * JSON answer has them), its finish reason, its log probabilities when
 * the request asked for them (each chunk's `logprobs.content` / `.refusal` entries in order, as the
 * JSON answer has them; else null), the matched stop sequence an upstream named (vLLM's choice
 * `stop_reason`, a string), an Anthropic upstream's refusal `stop_details` (on the finishing chunk's
 * choice, as on the JSON answer's), and the usage chunk when the request asked for one (else `usage` is null).
 */
export class StreamedCompletion {
  private head: Json | undefined;
  private readonly choices = new Map<number, Choice>();
  private usage: unknown = null;

  /** One SSE data payload of the stream, returned parsed when it is a chunk; anything else is ignored. */
  push(data: string): Json | undefined {
    let chunk: Json;
    try {
      chunk = JSON.parse(data) as Json;
    } catch {
      return undefined;
    }
    if (!chunk || chunk.object !== 'chat.completion.chunk') return undefined;
    this.head ??= { id: chunk.id, created: chunk.created, model: chunk.model, system_fingerprint: chunk.system_fingerprint, service_tier: chunk.service_tier };
    if (chunk.usage) this.usage = chunk.usage;
    for (const c of (chunk.choices as Json[] | undefined) ?? []) this.add(c);
    return chunk;
  }

  private add(c: Json): void {
    const index = Number(c.index ?? 0);
    let choice = this.choices.get(index);
    if (!choice) {
      choice = { index, message: { role: 'assistant', content: null, refusal: null, annotations: [] }, finish_reason: null, logprobs: null };
      this.choices.set(index, choice);
    }
    const delta = (c.delta ?? {}) as Json;
    if (typeof delta.role === 'string') choice.message.role = delta.role;
    if (typeof delta.content === 'string') choice.message.content = (choice.message.content ?? '') + delta.content;
    if (typeof delta.refusal === 'string') choice.message.refusal = (choice.message.refusal ?? '') + delta.refusal;
    if (typeof delta.reasoning_content === 'string') choice.message.reasoning_content = (choice.message.reasoning_content ?? '') + delta.reasoning_content;
    if (Array.isArray(delta.thinking_blocks)) (choice.message.thinking_blocks ??= []).push(...delta.thinking_blocks);
    // an upstream's url_citation annotations, when its deltas carry them (a search model's, at the end of its text)
    if (Array.isArray(delta.annotations)) choice.message.annotations.push(...delta.annotations);
    for (const t of (delta.tool_calls as Json[] | undefined) ?? []) {
      const calls = (choice.message.tool_calls ??= []);
      const at = Number(t.index ?? calls.length);
      let call = calls.find((x) => x.index === at);
      if (!call) {
        call = { index: at, type: 'function', function: { name: '', arguments: '' } };
        calls.push(call);
      }
      if (typeof t.id === 'string') call.id = t.id;
      if (typeof t.type === 'string') call.type = t.type;
      const f = (t.function ?? {}) as Json;
      if (typeof f.name === 'string' && f.name) call.function.name = f.name;
      if (typeof f.arguments === 'string') call.function.arguments += f.arguments;
    }
    if (typeof c.finish_reason === 'string') choice.finish_reason = c.finish_reason;
    if (typeof c.stop_reason === 'string') choice.stop_reason = c.stop_reason;
    if (typeof c.native_finish_reason === 'string') choice.native_finish_reason = c.native_finish_reason;
    if (c.stop_details && typeof c.stop_details === 'object') choice.stop_details = c.stop_details;
    const lp = c.logprobs as { content?: unknown; refusal?: unknown } | null | undefined;
    if (lp && typeof lp === 'object') {
      const into = (choice.logprobs ??= { content: null, refusal: null });
      if (Array.isArray(lp.content)) (into.content ??= []).push(...lp.content);
      if (Array.isArray(lp.refusal)) (into.refusal ??= []).push(...lp.refusal);
    }
  }

  /** The completion, or undefined when no chunk came. */
  completion(): Json | undefined {
    if (!this.head) return undefined;
    const choices = [...this.choices.values()]
      .sort((a, b) => a.index - b.index)
      .map((c) => {
        const calls = c.message.tool_calls?.sort((a, b) => a.index - b.index).map((t) => ({ id: t.id, type: t.type, function: t.function }));
        const message: Json = { role: c.message.role, content: c.message.content, refusal: c.message.refusal, annotations: c.message.annotations };
        if (calls?.length) message.tool_calls = calls;
        if (c.message.reasoning_content !== undefined) message.reasoning_content = c.message.reasoning_content;
        if (c.message.thinking_blocks) message.thinking_blocks = c.message.thinking_blocks;
        const out: Json = { index: c.index, message, finish_reason: c.finish_reason, logprobs: c.logprobs };
        if (c.stop_reason !== undefined) out.stop_reason = c.stop_reason;
        if (c.native_finish_reason !== undefined) out.native_finish_reason = c.native_finish_reason;
        if (c.stop_details !== undefined) out.stop_details = c.stop_details;
        return out;
      });
    const out: Json = { id: this.head.id, object: 'chat.completion', created: this.head.created, model: this.head.model, choices, usage: this.usage };
    // the upstream's own fields, when its chunks carried them
    if (typeof this.head.system_fingerprint === 'string') out.system_fingerprint = this.head.system_fingerprint;
    if (typeof this.head.service_tier === 'string') out.service_tier = this.head.service_tier;
    return out;
  }
}

/**
 * A chunk as a client that did not ask for usage gets it, when the stream was asked for usage only to
 * keep it (a stored stream without `stream_options.include_usage`): the usage-only chunk is left out
 * (null), a `usage` field of another chunk removed (its JSON again); undefined when the chunk has none
 * (send it as it came).
 */
export function withoutUsage(chunk: Json): string | null | undefined {
  if (!('usage' in chunk)) return undefined;
  if (chunk.usage && Array.isArray(chunk.choices) && chunk.choices.length === 0) return null;
  const { usage: _usage, ...rest } = chunk;
  return JSON.stringify(rest);
}
