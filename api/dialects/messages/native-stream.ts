import type { NativeStep, NativeTranscript } from '../../dispatch/native-search/loop';
import type { NativeKind } from '../../dispatch/native-search/tools';
import type { MessagesEvent } from './stream';
import { nativeStop, nativeUsage, stepBlocks } from './native';
import { anthropicMessage, deltaUsage, messagesUsage, stopDelta } from './response';
import type { CanonicalUsage, ThinkingBlock } from '../canonical';
import { COMPACTION_START, compactionDelta, compactionIterations } from './compaction';

/**
 * Anthropic's event sequence for a native search answer, step by step as the loop runs:
 * message_start (at the first step, so errors before it are still plain HTTP errors), then per block
 * content_block_start / deltas / content_block_stop (a ping after the first start), a turn's signed
 * thinking blocks as thinking_delta and signature_delta (redacted ones whole), server tool
 * input as input_json_delta, results as complete blocks, the model's text as text_delta events as the
 * upstream streams it, then its citations_delta events (known once the turn's text is complete);
 * finally message_delta with the stop reason and usage (with server_tool_use) and message_stop.
 */
export class NativeMessagesStream {
  private started = false;
  private pinged = false;
  private index = 0;
  private readonly steps: NativeStep[] = [];
  /** The index of the text block being streamed, if one is open. */
  private openText: number | undefined;

  constructor(
    private readonly publicModel: string,
    private readonly id: string,
    /** The organization the answer's seals are bound to. */
    private readonly orgId: string,
  ) {}

  private start(out: MessagesEvent[]): void {
    if (this.started) return;
    this.started = true;
    out.push({ type: 'message_start', message: anthropicMessage(this.id, this.publicModel, [], null, messagesUsage(undefined)) });
  }

  private block(out: MessagesEvent[], startBlock: Record<string, unknown>, deltas: Array<Record<string, unknown>>): void {
    const index = this.index++;
    out.push({ type: 'content_block_start', index, content_block: startBlock });
    if (!this.pinged) {
      this.pinged = true;
      out.push({ type: 'ping' });
    }
    for (const delta of deltas) out.push({ type: 'content_block_delta', index, delta });
    out.push({ type: 'content_block_stop', index });
  }

  /** The summary pass's usage, when the answer opened with a compaction block (`compaction`). */
  private compacted: { usage: CanonicalUsage | null | undefined } | undefined;

  /** The answer's first block, a server-side compaction's (api/routes/messages/compaction.ts), whole. */
  compaction(summary: string, usage: CanonicalUsage | null | undefined): MessagesEvent[] {
    const out: MessagesEvent[] = [];
    this.start(out);
    this.compacted = { usage };
    this.block(out, COMPACTION_START, [compactionDelta(summary)]);
    return out;
  }

  /** A piece of the model's text as the upstream produced it: opens the text block at the first. */
  text(delta: string): MessagesEvent[] {
    const out: MessagesEvent[] = [];
    this.start(out);
    if (this.openText === undefined) {
      this.openText = this.index++;
      out.push({ type: 'content_block_start', index: this.openText, content_block: { type: 'text', text: '' } });
      if (!this.pinged) {
        this.pinged = true;
        out.push({ type: 'ping' });
      }
    }
    out.push({ type: 'content_block_delta', index: this.openText, delta: { type: 'text_delta', text: delta } });
    return out;
  }

  /** Signed thinking blocks of the turn streaming now, each as soon as whole (before the turn's text): its `reasoning` step then adds nothing. */
  thinking(blocks: ThinkingBlock[]): MessagesEvent[] {
    const out: MessagesEvent[] = [];
    this.start(out);
    this.thinkingOut = true;
    for (const b of blocks) this.thinkingBlock(out, b);
    return out;
  }

  /** A thinking block as Anthropic streams it: its text, then its signature just before its stop; a redacted one whole. */
  private thinkingBlock(out: MessagesEvent[], b: ThinkingBlock): void {
    if (b.type === 'redacted_thinking') return this.block(out, b, []);
    const deltas = [...(b.thinking ? [{ type: 'thinking_delta', thinking: b.thinking }] : []), { type: 'signature_delta', signature: b.signature }];
    this.block(out, { type: 'thinking', thinking: '', signature: '' }, deltas);
  }

  /** The streaming turn's thinking blocks went out already (thinking()). */
  private thinkingOut = false;

  push(step: NativeStep): MessagesEvent[] {
    const out: MessagesEvent[] = [];
    this.start(out);
    this.steps.push(step);
    if (step.type === 'reasoning' && this.thinkingOut) {
      this.thinkingOut = false;
      return out;
    }
    for (const b of stepBlocks(this.steps, this.steps.length - 1, this.orgId)) {
      if (b.type === 'text' && this.openText !== undefined) {
        // The turn's text went out delta by delta; its citations (known once it is complete) close it.
        const index = this.openText;
        this.openText = undefined;
        for (const citation of (b.citations as Array<Record<string, unknown>> | undefined) ?? []) out.push({ type: 'content_block_delta', index, delta: { type: 'citations_delta', citation } });
        out.push({ type: 'content_block_stop', index });
      } else if (b.type === 'text') {
        const citations = (b.citations as Array<Record<string, unknown>> | undefined) ?? [];
        const deltas = [...citations.map((citation) => ({ type: 'citations_delta', citation })), { type: 'text_delta', text: b.text }];
        this.block(out, { type: 'text', text: '', ...(citations.length ? { citations: [] } : {}) }, deltas);
      } else if (b.type === 'thinking' || b.type === 'redacted_thinking') {
        this.thinkingBlock(out, b as ThinkingBlock);
      } else if (b.type === 'server_tool_use' || b.type === 'tool_use') {
        this.block(out, { ...b, input: {} }, [{ type: 'input_json_delta', partial_json: JSON.stringify(b.input ?? {}) }]);
      } else {
        this.block(out, b, []);
      }
    }
    return out;
  }

  end(t: NativeTranscript, reruns: Record<NativeKind, number>): MessagesEvent[] {
    const out: MessagesEvent[] = [];
    this.start(out);
    const usage = deltaUsage(nativeUsage(t, reruns));
    if (this.compacted) usage.iterations = compactionIterations(this.compacted.usage, t.usage, this.publicModel);
    // a refusal message: its text block last, whole (transcriptToMessage)
    if (t.refusal?.text) this.block(out, { type: 'text', text: '' }, [{ type: 'text_delta', text: t.refusal.text }]);
    out.push({ type: 'message_delta', delta: stopDelta(nativeStop(t)), usage });
    out.push({ type: 'message_stop' });
    return out;
  }
}
