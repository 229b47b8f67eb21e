import { completeJson, type CanonicalChunk, type CanonicalUsage, type FinishReason, type ThinkingBlock } from '../canonical';
import { PAUSED_STOP, anthropicMessage, anthropicToolId, deltaUsage, matchedStop, messageId, messagesUsage, refusalDetails, stopDelta, stopOf, windowExceeded, type ReasoningShown, type RefusalStopDetails } from './response';
import { COMPACTION_START, compactionDelta, compactionIterations } from './compaction';

/** One Anthropic stream event; `type` is also its SSE event name. */
export type MessagesEvent = { type: string } & Record<string, unknown>;

/** One upstream tool call (`from`: the upstream's id, `id`: its tool_use id): arguments `held` until its block opens (`streamed`), then `sent`. */
type Tool = { id: string; from: string; name: string; held: string; sent: string; streamed: boolean };
type Block = { kind: 'text' } | { kind: 'thinking' } | { kind: 'redacted' } | { kind: 'tool'; tool: Tool } | { kind: 'compaction' };

/**
 * Turns canonical chat chunks into Anthropic's event sequence: message_start, then per content
 * block content_block_start / content_block_delta... / content_block_stop with increasing indices
 * (a ping after the first block start, as Anthropic does), then message_delta with the stop reason
 * and usage, and message_stop. A block closes when output of another kind (or another tool call)
 * begins, so indices match the final message's `content` array.
 *
 * Tool calls are told apart by their id, not their chunk `index` alone (some upstreams send
 * several calls on one index, each with its own id). A call's block opens as soon as no other
 * call's arguments are still being written; the arguments of a call that arrive while another's
 * are (upstreams that interleave parallel calls' deltas) are held and sent whole when its block
 * opens, at the latest before the message ends. A call without an id, or with one Anthropic would refuse (anthropicToolId), gets `toolu_` + random hex.
 */
export class MessagesStreamTranslator {
  private started = false;
  private pinged = false;
  private open: Block | undefined;
  private nextIndex = 0;
  private finish: FinishReason = null;
  private usage: CanonicalChunk['usage'] = null;
  /** Every tool call in order of appearance, and the current one per upstream `index`. */
  private tools: Tool[] = [];
  private byIndex = new Map<number, Tool>();

  private matched: string | null = null;
  /** The upstream's answer was cut by the model's context window (response.ts windowExceeded). */
  private window = false;
  /** The upstream's refusal text (streamed as text; the stop reason is then `refusal`, the text its explanation). */
  private refusal = '';
  /** A refusal's stop_details, from the finishing chunk (refusalDetails). */
  private details: RefusalStopDetails | undefined;
  /** The summary pass's usage, when the answer opened with a compaction block (`compaction`). */
  private compacted: { usage: CanonicalUsage | null | undefined } | undefined;

  /** `stopSequences`: the caller's, to report which one matched when the upstream says (vLLM). */
  constructor(
    private readonly publicModel: string,
    private readonly id = messageId(),
    private readonly stopSequences?: string[],
    /** The request's context editing report (`context_management` on message_delta), when it asked for editing. */
    private readonly contextManagement?: { applied_edits: unknown[] },
    /** What an upstream's unsigned reasoning shows (response.ts reasoningShown): a thinking block with its text, without it (`display: "omitted"`), or nothing when thinking is not on. */
    private readonly reasoning: ReasoningShown = 'none',
  ) {}

  /**
   * message_start, once: its usage's `service_tier` is the tier the first chunk reports served
   * (`served`, served-tier.ts; OpenAI's chunks name it on every one), the only place Anthropic's stream
   * carries it (MessageDeltaUsage has none); `standard` when the stream opens without one.
   */
  private start(out: MessagesEvent[], served?: unknown): void {
    if (this.started) return;
    this.started = true;
    out.push({ type: 'message_start', message: anthropicMessage(this.id, this.publicModel, [], null, messagesUsage(undefined, served)) });
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

  /**
   * The answer's first block, a server-side compaction's (api/routes/messages/compaction.ts): its
   * start, one `compaction_delta` with the whole summary (as Anthropic sends it), its stop. The
   * usage of the summary pass is reported in `usage.iterations` at the end.
   */
  compaction(summary: string, usage: CanonicalUsage | null | undefined): MessagesEvent[] {
    const out: MessagesEvent[] = [];
    this.start(out);
    this.compacted = { usage };
    this.openBlock(out, { kind: 'compaction' }, COMPACTION_START);
    out.push({ type: 'content_block_delta', index: this.index, delta: compactionDelta(summary) });
    this.close(out);
    return out;
  }

  /** The answer's usage so far (the upstream's last usage chunk). */
  get answerUsage(): CanonicalUsage | null | undefined {
    return this.usage;
  }

  /** Events for one canonical chunk. */
  push(chunk: CanonicalChunk): MessagesEvent[] {
    const out: MessagesEvent[] = [];
    this.start(out, chunk.service_tier);
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    const delta = choice?.delta;
    // thinking not on: no block and no index taken, so the blocks that follow are numbered from 0
    if (delta?.reasoning_content && this.reasoning !== 'none') {
      if (this.open?.kind !== 'thinking') this.openThinking(out);
      if (this.reasoning === 'text') out.push({ type: 'content_block_delta', index: this.index, delta: { type: 'thinking_delta', thinking: delta.reasoning_content } });
    }
    for (const b of delta?.thinking_blocks ?? []) this.signed(out, b);
    if (delta?.refusal) this.refusal += delta.refusal;
    for (const text of [delta?.content, delta?.refusal]) {
      if (!text) continue;
      if (this.open?.kind !== 'text') this.flushTools(out), this.openBlock(out, { kind: 'text' }, { type: 'text', text: '' });
      out.push({ type: 'content_block_delta', index: this.index, delta: { type: 'text_delta', text } });
    }
    for (const call of delta?.tool_calls ?? []) {
      let tool = this.byIndex.get(call.index);
      if (!tool || (call.id && call.id !== tool.from)) {
        tool = { id: anthropicToolId(call.id), from: call.id ?? '', name: '', held: '', sent: '', streamed: false };
        this.tools.push(tool);
        this.byIndex.set(call.index, tool);
      }
      if (call.function?.name && !tool.name) tool.name = call.function.name;
      const args = call.function?.arguments ?? '';
      if (this.open?.kind === 'tool' && this.open.tool === tool) {
        if (args) out.push({ type: 'content_block_delta', index: this.index, delta: { type: 'input_json_delta', partial_json: args } });
        tool.sent += args;
        continue;
      }
      tool.held += args;
      // another call's arguments still being written: this one waits (interleaved parallel calls)
      const writing = this.open?.kind === 'tool' && !completeJson(this.open.tool.sent);
      if (!tool.streamed && tool.name && !writing) this.openTool(out, tool);
    }
    if (choice?.finish_reason) {
      [this.finish, this.matched, this.window] = [choice.finish_reason, matchedStop(choice, this.stopSequences), windowExceeded(choice)];
      this.details = refusalDetails(choice, this.refusal);
    }
    return out;
  }

  private openThinking(out: MessagesEvent[]): void {
    this.flushTools(out);
    this.openBlock(out, { kind: 'thinking' }, { type: 'thinking', thinking: '', signature: '' });
  }

  /**
   * A Claude upstream's signed block, whole once its signature came: the open thinking
   * block's signature_delta, which ends it (a block whose text was not shown is opened for it); a
   * redacted block is a block of its own.
   */
  private signed(out: MessagesEvent[], b: ThinkingBlock): void {
    if (b.type === 'redacted_thinking') {
      this.flushTools(out);
      this.openBlock(out, { kind: 'redacted' }, { type: 'redacted_thinking', data: b.data });
      this.close(out);
      return;
    }
    if (this.open?.kind !== 'thinking') {
      this.openThinking(out);
      if (b.thinking) out.push({ type: 'content_block_delta', index: this.index, delta: { type: 'thinking_delta', thinking: b.thinking } });
    }
    out.push({ type: 'content_block_delta', index: this.index, delta: { type: 'signature_delta', signature: b.signature } });
    this.close(out);
  }

  /** Opens a tool call's block and sends the arguments held so far. */
  private openTool(out: MessagesEvent[], tool: Tool): void {
    tool.streamed = true;
    this.openBlock(out, { kind: 'tool', tool }, { type: 'tool_use', id: tool.id, name: tool.name, input: {} });
    if (tool.held) out.push({ type: 'content_block_delta', index: this.index, delta: { type: 'input_json_delta', partial_json: tool.held } });
    [tool.sent, tool.held] = [tool.held, ''];
  }

  /** Every tool call whose block has not opened yet, each as a whole block. */
  private flushTools(out: MessagesEvent[]): void {
    for (const tool of this.tools) if (!tool.streamed) this.openTool(out, tool);
  }

  /**
   * The closing events, once the upstream finished; `paused`: the answer ends after its compaction
   * block (`pause_after_compaction`), with stop reason `compaction` and no tokens of its own.
   */
  end(paused = false): MessagesEvent[] {
    const out: MessagesEvent[] = [];
    this.start(out);
    this.flushTools(out);
    this.close(out);
    const usage = deltaUsage(messagesUsage(this.usage));
    if (this.compacted) usage.iterations = compactionIterations(this.compacted.usage, this.usage, this.publicModel, paused);
    const stop = paused ? PAUSED_STOP : stopOf(this.finish, this.tools.length > 0, this.matched, this.refusal !== '', this.window, this.details ?? refusalDetails(undefined, this.refusal));
    const delta: MessagesEvent = { type: 'message_delta', delta: stopDelta(stop), usage };
    if (this.contextManagement) delta.context_management = this.contextManagement;
    out.push(delta);
    out.push({ type: 'message_stop' });
    return out;
  }
}
