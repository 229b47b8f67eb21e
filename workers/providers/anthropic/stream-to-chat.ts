import { chatUsage, finishReason, matchedStopOf, refusalDetailsOf } from './from-messages';
import { OpeningChunks } from '../opening-chunks';

type Event = Record<string, unknown> & { type: string };

/**
 * Anthropic stream events → canonical chat chunks. Tool-use blocks become tool calls numbered in
 * order of appearance; a tool call streamed with no argument text (Anthropic's input {}) gets
 * arguments "{}" when its block stops, as the JSON path and Anthropic's SDK give; thinking deltas
 * become `reasoning_content`, and each thinking block, once its `signature_delta` arrives (just before
 * its stop), `thinking_blocks` with the whole signed block; a redacted thinking block is
 * `thinking_blocks` at its start. The role chunk comes with the first output (opening-chunks.ts).
 * The usage-only chunk comes last, as with `stream_options.include_usage`.
 */
export class MessagesToChatStream {
  private id = '';
  private readonly created = Math.floor(Date.now() / 1000);
  private toolByBlock = new Map<number, number>();
  /** Tool blocks that have received argument text: one that got none closes with "{}" (as the SDK's empty buffer is {}). */
  private withArgs = new Set<number>();
  private usage: Record<string, unknown> = {};
  /** The text of each thinking block so far, by block index (its signed block repeats it). */
  private thinking = new Map<number, string>();
  private readonly opening = new OpeningChunks();

  constructor(private readonly publicModel: string) {}

  private chunk(delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.publicModel, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] };
  }

  push(ev: Event): Record<string, unknown>[] {
    return this.opening.apply(this.translate(ev));
  }

  private translate(ev: Event): Record<string, unknown>[] {
    switch (ev.type) {
      case 'message_start': {
        const m = ev.message as { id?: string; usage?: Record<string, number> };
        this.id = `chatcmpl-${m.id ?? ''}`;
        this.usage = { ...(m.usage ?? {}) };
        return [];
      }
      case 'content_block_start': {
        const b = ev.content_block as { type: string; id?: string; name?: string; data?: unknown };
        if (b.type === 'thinking') {
          this.thinking.set(ev.index as number, '');
          // opens the answer at once (opening-chunks.ts): its text may come much later, or not at all when its display is omitted
          return [this.chunk({})];
        }
        if (b.type === 'redacted_thinking' && typeof b.data === 'string' && b.data) return [this.chunk({ thinking_blocks: [{ type: 'redacted_thinking', data: b.data }] })];
        if (b.type !== 'tool_use') return [];
        const n = this.toolByBlock.size;
        this.toolByBlock.set(ev.index as number, n);
        return [this.chunk({ tool_calls: [{ index: n, id: b.id, type: 'function', function: { name: b.name, arguments: '' } }] })];
      }
      case 'content_block_delta': {
        const d = ev.delta as { type: string; text?: string; partial_json?: string; thinking?: string; signature?: string };
        const at = ev.index as number;
        if (d.type === 'text_delta') return [this.chunk({ content: d.text })];
        if (d.type === 'thinking_delta') {
          this.thinking.set(at, (this.thinking.get(at) ?? '') + (d.thinking ?? ''));
          return [this.chunk({ reasoning_content: d.thinking })];
        }
        if (d.type === 'signature_delta' && typeof d.signature === 'string' && d.signature) {
          return [this.chunk({ thinking_blocks: [{ type: 'thinking', thinking: this.thinking.get(at) ?? '', signature: d.signature }] })];
        }
        if (d.type === 'input_json_delta') {
          const n = this.toolByBlock.get(ev.index as number);
          if (n === undefined || !d.partial_json) return [];
          this.withArgs.add(n);
          return [this.chunk({ tool_calls: [{ index: n, function: { arguments: d.partial_json } }] })];
        }
        return [];
      }
      case 'content_block_stop': {
        const n = this.toolByBlock.get(ev.index as number);
        if (n === undefined || this.withArgs.has(n)) return [];
        this.withArgs.add(n);
        return [this.chunk({ tool_calls: [{ index: n, function: { arguments: '{}' } }] })];
      }
      case 'message_delta': {
        const u = (ev.usage ?? {}) as Record<string, number | null>;
        for (const [k, v] of Object.entries(u)) if (v != null) this.usage[k] = v;
        const d = ev.delta as { stop_reason?: string; stop_sequence?: unknown; stop_details?: unknown };
        const chunk = this.chunk({}, finishReason(d.stop_reason));
        Object.assign((chunk.choices as Array<Record<string, unknown>>)[0], matchedStopOf(d.stop_reason, d.stop_sequence), refusalDetailsOf(d.stop_reason, d.stop_details));
        return [chunk];
      }
      default:
        return []; // ping, message_stop
    }
  }

  usageChunk(): Record<string, unknown> {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.publicModel, choices: [], usage: this.usageTotals() };
  }

  usageTotals() {
    return chatUsage(this.usage as never);
  }
}
