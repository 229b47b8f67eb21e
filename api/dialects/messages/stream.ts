import type { CanonicalChunk, FinishReason } from '../canonical';
import { messageId, messagesUsage, stopReason } from './response';

/** One Anthropic stream event; `type` is also its SSE event name. */
export type MessagesEvent = { type: string } & Record<string, unknown>;

type Block = { kind: 'text' } | { kind: 'thinking' } | { kind: 'tool'; toolIndex: number };

/**
 * Turns canonical chat chunks into Anthropic's event sequence: message_start, then per content
 * block content_block_start / content_block_delta... / content_block_stop with increasing indices
 * (a ping after the first block start, as Anthropic does), then message_delta with the stop reason
 * and usage, and message_stop. A block closes when output of another kind (or another tool call)
 * begins, so indices match the final message's `content` array.
 */
export class MessagesStreamTranslator {
  private started = false;
  private pinged = false;
  private open: Block | undefined;
  private nextIndex = 0;
  private finish: FinishReason = null;
  private usage: CanonicalChunk['usage'] = null;
  private toolCalls = 0;

  constructor(
    private readonly publicModel: string,
    private readonly id = messageId(),
  ) {}

  private start(out: MessagesEvent[]): void {
    if (this.started) return;
    this.started = true;
    out.push({
      type: 'message_start',
      message: {
        id: this.id,
        type: 'message',
        role: 'assistant',
        model: this.publicModel,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
    });
  }

  private close(out: MessagesEvent[]): void {
    if (!this.open) return;
    out.push({ type: 'content_block_stop', index: this.nextIndex - 1 });
    this.open = undefined;
  }

  private openBlock(out: MessagesEvent[], block: Block, contentBlock: Record<string, unknown>): void {
    this.close(out);
    this.open = block;
    out.push({ type: 'content_block_start', index: this.nextIndex++, content_block: contentBlock });
    if (!this.pinged) {
      this.pinged = true;
      out.push({ type: 'ping' });
    }
  }

  private get index(): number {
    return this.nextIndex - 1;
  }

  /** Events for one canonical chunk. */
  push(chunk: CanonicalChunk): MessagesEvent[] {
    const out: MessagesEvent[] = [];
    this.start(out);
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    const delta = choice?.delta;
    if (delta?.reasoning_content) {
      if (this.open?.kind !== 'thinking') this.openBlock(out, { kind: 'thinking' }, { type: 'thinking', thinking: '', signature: '' });
      out.push({ type: 'content_block_delta', index: this.index, delta: { type: 'thinking_delta', thinking: delta.reasoning_content } });
    }
    if (delta?.content) {
      if (this.open?.kind !== 'text') this.openBlock(out, { kind: 'text' }, { type: 'text', text: '' });
      out.push({ type: 'content_block_delta', index: this.index, delta: { type: 'text_delta', text: delta.content } });
    }
    for (const call of delta?.tool_calls ?? []) {
      const current = this.open?.kind === 'tool' ? this.open.toolIndex : undefined;
      if (current !== call.index) {
        this.toolCalls++;
        this.openBlock(out, { kind: 'tool', toolIndex: call.index }, { type: 'tool_use', id: call.id ?? `toolu_${this.nextIndex}`, name: call.function?.name ?? '', input: {} });
      }
      const args = call.function?.arguments;
      if (args) out.push({ type: 'content_block_delta', index: this.index, delta: { type: 'input_json_delta', partial_json: args } });
    }
    if (choice?.finish_reason) this.finish = choice.finish_reason;
    return out;
  }

  /** The closing events, once the upstream finished. */
  end(): MessagesEvent[] {
    const out: MessagesEvent[] = [];
    this.start(out);
    this.close(out);
    const u = messagesUsage(this.usage);
    out.push({
      type: 'message_delta',
      delta: { stop_reason: stopReason(this.finish, this.toolCalls > 0), stop_sequence: null },
      usage: { input_tokens: u.input_tokens, output_tokens: u.output_tokens, cache_read_input_tokens: u.cache_read_input_tokens },
    });
    out.push({ type: 'message_stop' });
    return out;
  }
}
