import type { ConverseStreamOutput, TokenUsage } from '@aws-sdk/client-bedrock-runtime';
import { chatUsage, finishReason, matchedStopOf } from './from-converse';
import { redacted } from './reasoning';
import { OpeningChunks } from '../opening-chunks';

/**
 * Converse stream events → canonical chat chunks. Tool-use blocks become tool calls numbered in
 * order of appearance (one streamed with no input text gets arguments "{}" at its
 * contentBlockStop, as the JSON path gives); reasoning deltas become `reasoning_content`, and a
 * reasoning block's signature delta `thinking_blocks` with the whole signed block (its text so far), a
 * redacted reasoning delta a redacted_thinking block (as the Anthropic adapter streams them). The finish
 * chunk comes at messageStop; the usage (Bedrock's `metadata` event, after it) in the usage-only
 * chunk. The role chunk comes with the first output (opening-chunks.ts). A stream without
 * messageStop did not finish (`stopped` stays false).
 */
export class ConverseToChatStream {
  private readonly created = Math.floor(Date.now() / 1000);
  private toolByBlock = new Map<number, number>();
  /** Tool blocks that have received input text: one that got none closes with "{}". */
  private withArgs = new Set<number>();
  private usage: Partial<TokenUsage> = {};
  /** Each reasoning block's text so far, for its signed block. */
  private reasoning = new Map<number, string>();
  private readonly opening = new OpeningChunks();
  /** messageStop arrived: the answer is complete. */
  stopped = false;

  constructor(
    private readonly id: string,
    private readonly publicModel: string,
    /** The request's stop sequences, to say which one ended the answer (from-converse.ts matchedStopOf). */
    private readonly stops: string[] = [],
  ) {}

  private chunk(delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.publicModel, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] };
  }

  push(ev: ConverseStreamOutput): Record<string, unknown>[] {
    return this.opening.apply(this.translate(ev));
  }

  private translate(ev: ConverseStreamOutput): Record<string, unknown>[] {
    if (ev.messageStart) return [];
    if (ev.contentBlockStart) {
      const tu = ev.contentBlockStart.start?.toolUse;
      if (!tu) return [];
      const n = this.toolByBlock.size;
      this.toolByBlock.set(ev.contentBlockStart.contentBlockIndex ?? 0, n);
      return [this.chunk({ tool_calls: [{ index: n, id: tu.toolUseId, type: 'function', function: { name: tu.name, arguments: '' } }] })];
    }
    if (ev.contentBlockDelta) {
      const d = ev.contentBlockDelta.delta;
      if (d?.text !== undefined) return d.text ? [this.chunk({ content: d.text })] : [];
      const r = d?.reasoningContent;
      if (r) {
        const at = ev.contentBlockDelta.contentBlockIndex ?? 0;
        if (r.text) {
          this.reasoning.set(at, (this.reasoning.get(at) ?? '') + r.text);
          return [this.chunk({ reasoning_content: r.text })];
        }
        if (r.signature) return [this.chunk({ thinking_blocks: [{ type: 'thinking', thinking: this.reasoning.get(at) ?? '', signature: r.signature }] })];
        if (r.redactedContent?.length) return [this.chunk({ thinking_blocks: [redacted(r.redactedContent)] })];
        return [];
      }
      if (d?.toolUse) {
        const n = this.toolByBlock.get(ev.contentBlockDelta.contentBlockIndex ?? 0);
        if (n === undefined || !d.toolUse.input) return [];
        this.withArgs.add(n);
        return [this.chunk({ tool_calls: [{ index: n, function: { arguments: d.toolUse.input } }] })];
      }
      return [];
    }
    if (ev.contentBlockStop) {
      const n = this.toolByBlock.get(ev.contentBlockStop.contentBlockIndex ?? 0);
      if (n === undefined || this.withArgs.has(n)) return [];
      this.withArgs.add(n);
      return [this.chunk({ tool_calls: [{ index: n, function: { arguments: '{}' } }] })];
    }
    if (ev.messageStop) {
      this.stopped = true;
      const chunk = this.chunk({}, finishReason(ev.messageStop.stopReason));
      Object.assign((chunk.choices as Array<Record<string, unknown>>)[0], matchedStopOf(ev.messageStop.stopReason, ev.messageStop.additionalModelResponseFields, this.stops));
      return [chunk];
    }
    if (ev.metadata) this.usage = ev.metadata.usage ?? {};
    return []; // metadata
  }

  usageChunk(): Record<string, unknown> {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.publicModel, choices: [], usage: this.usageTotals() };
  }

  usageTotals() {
    return chatUsage(this.usage);
  }
}
