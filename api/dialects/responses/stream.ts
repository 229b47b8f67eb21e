import { addUsage, completeJson, type CanonicalChunk, type CanonicalMessage, type CanonicalToolCall, type FinishReason, type ThinkingBlock } from '../canonical';
import { assistantTurn, cutShort, functionCallItem, messageItem, newId, reasoningItem, responseObject, responsesLogprobs, type LogProb, type MessagePart, type OutputItem, type ResponseFrame } from './response';

import { ResponsesEventWriter, type ResponsesEvent } from './event-writer';

export type { ResponsesEvent };

/** Call items added only once their arguments are complete (their operation or action is read from them). */
const ANNOUNCED_WHOLE = new Set(['apply_patch_call', 'shell_call', 'local_shell_call']);

/** One upstream tool call: its arguments `held` while another call's are being written, until its item opens (`streamed`). */
type Call = { call: CanonicalToolCall; held: string; streamed: boolean };

type Open =
  | { kind: 'reasoning'; index: number; id: string; text: string; blocks: ThinkingBlock[] }
  | { kind: 'message'; index: number; id: string; parts: MessagePart[] }
  | { kind: 'call'; index: number; id: string; tool: Call; call: CanonicalToolCall; itemType: string };

/**
 * Turns canonical chat chunks into the Responses streaming events: response.created and
 * response.in_progress, then per output item output_item.added, its content (the upstream's reasoning,
 * `delta.reasoning_content`, is a `reasoning` item whose one `reasoning_text` part has content_part.added,
 * reasoning_text.delta..., reasoning_text.done, content_part.done; a message's content_part.added,
 * output_text.delta..., output_text.done, content_part.done; a refusal (`delta.refusal`) is a
 * part of its own with refusal.delta... and refusal.done; or function_call_arguments.delta...,
 * function_call_arguments.done) and output_item.done, and finally response.completed (or
 * response.incomplete when the output was cut short; response.failed when the stream failed).
 * Every event carries a sequence_number.
 *
 * Tool calls are told apart by their id as well as their chunk `index` (some OpenAI-compatible
 * upstreams send parallel calls on one index, each with its own id). A call's item opens once no other
 * call's arguments are still being written; the arguments of a call that arrive while another's are
 * (upstreams that interleave parallel calls' deltas) are held and sent whole when its item opens, at
 * the latest before the next item of another kind or the end, as the messages dialect does (its stream.ts).
 */
export class ResponsesStreamTranslator extends ResponsesEventWriter {
  private open: Open | undefined;
  private readonly output: OutputItem[] = [];
  private text = '';
  private readonly calls: CanonicalToolCall[] = [];
  /** Every tool call in order of appearance, and the current one per upstream `index`. */
  private readonly tools: Call[] = [];
  private readonly byIndex = new Map<number, Call>();
  /** An Anthropic-native upstream's signed thinking blocks, for the stored turn. */
  private readonly thinking: ThinkingBlock[] = [];
  private finish: FinishReason = null;
  private usage: CanonicalChunk['usage'] = null;
  /** Usage of the request's passes before the answer (a server-side compaction), added to the answer's. */
  private usageBefore: CanonicalChunk['usage'] = null;
  /** The answer's own usage (without what `before` added). */
  get answerUsage(): CanonicalChunk['usage'] {
    return this.usage;
  }
  /** The final Response object and assistant turn, once `end()` ran. */
  final: { response: Record<string, unknown>; assistant: CanonicalMessage } | undefined;

  /** The events that end a message's last content part (its text or refusal is final). */
  private closePart(out: ResponsesEvent[], o: Extract<Open, { kind: 'message' }>): void {
    const content_index = o.parts.length - 1;
    this.partDone(out, o.id, o.index, content_index, o.parts[content_index]);
  }

  /**
   * Ends the open item and then every tool call still held, each as a whole item; `status` is
   * `incomplete` for the last of them when the answer was cut short.
   */
  private close(out: ResponsesEvent[], status = 'completed'): void {
    const held = () => this.tools.find((t) => !t.streamed);
    this.closeOpen(out, held() ? 'completed' : status);
    for (let t = held(); t; t = held()) {
      this.openCall(out, t);
      this.closeOpen(out, held() ? 'completed' : status);
    }
  }

  /** Ends the open item. */
  private closeOpen(out: ResponsesEvent[], status: string): void {
    const o = this.open;
    if (!o) return;
    this.open = undefined;
    if (o.kind === 'reasoning') {
      const item = reasoningItem(o.id, o.text, status, o.blocks);
      this.output.push(item);
      this.reasoningDone(out, o.index, item, o.text);
    } else if (o.kind === 'message') {
      this.closePart(out, o);
      const item = messageItem(o.id, o.parts, status);
      this.output.push(item);
      this.ev(out, 'response.output_item.done', { output_index: o.index, item });
    } else {
      const item = functionCallItem(o.id, o.call, status, this.frame.req);
      // An apply_patch, shell or local shell call is announced once its operation or action is known (they come with the arguments).
      if (ANNOUNCED_WHOLE.has(o.itemType)) this.ev(out, 'response.output_item.added', { output_index: o.index, item: { ...item, status: 'in_progress' } });
      this.callDone(out, o.index, item);
      this.output.push(item);
      this.calls.push(o.call);
      this.ev(out, 'response.output_item.done', { output_index: o.index, item });
    }
  }

  /** The open reasoning item, opened as needed. */
  private reasoning(out: ResponsesEvent[]): Extract<Open, { kind: 'reasoning' }> {
    if (this.open?.kind !== 'reasoning') {
      this.close(out);
      const o: Open = { kind: 'reasoning', index: this.nextIndex, id: newId('rs'), text: '', blocks: [] };
      this.open = o;
      this.reasoningAdded(out, o.index, o.id);
    }
    return this.open as Extract<Open, { kind: 'reasoning' }>;
  }

  /** Appends the upstream's reasoning to the open reasoning item, opened (with its one part) as needed. */
  private reasoningPiece(out: ResponsesEvent[], delta: string): void {
    const o = this.reasoning(out);
    o.text += delta;
    this.reasoningDelta(out, o.index, o.id, delta);
  }

  /** Appends text to the open message's part of this type: the message and the part are opened as needed. */
  private messageDelta(out: ResponsesEvent[], type: MessagePart['type'], delta: string, logprobs: LogProb[] = []): void {
    if (this.open?.kind !== 'message') {
      this.close(out);
      const o: Open = { kind: 'message', index: this.nextIndex, id: newId('msg'), parts: [] };
      this.open = o;
      this.ev(out, 'response.output_item.added', { output_index: o.index, item: messageItem(o.id, [], 'in_progress') });
    }
    const o = this.open as Extract<Open, { kind: 'message' }>;
    if (o.parts.at(-1)?.type !== type) {
      if (o.parts.length) this.closePart(out, o);
      o.parts.push({ type, text: '' });
      this.partAdded(out, o.id, o.index, o.parts.length - 1, type);
    }
    const content_index = o.parts.length - 1;
    const p = o.parts[content_index];
    p.text += delta;
    this.text += delta;
    if (type !== 'refusal' && logprobs.length) (p.logprobs ??= []).push(...logprobs);
    this.partDelta(out, o.id, o.index, content_index, type, delta, logprobs);
  }

  /** Opens a tool call's item (output_item.added, but for a call announced whole) and sends the arguments held so far. */
  private openCall(out: ResponsesEvent[], t: Call): void {
    t.streamed = true;
    const added = functionCallItem(newId('fc'), t.call, 'in_progress', this.frame.req);
    const o: Open = { kind: 'call', index: this.nextIndex, id: added.id, tool: t, call: t.call, itemType: added.type };
    this.open = o;
    if (!ANNOUNCED_WHOLE.has(added.type)) this.ev(out, 'response.output_item.added', { output_index: o.index, item: added });
    const held = t.held;
    t.held = '';
    this.callArguments(out, o, held);
  }

  /** Appends to the open call's arguments (a function call's arguments.delta). */
  private callArguments(out: ResponsesEvent[], o: Extract<Open, { kind: 'call' }>, args: string): void {
    if (!args) return;
    o.call.function.arguments += args;
    // A custom tool's input, an apply_patch operation, a shell or local shell action and a tool search's arguments are known once the call is complete.
    if (o.itemType === 'function_call') this.ev(out, 'response.function_call_arguments.delta', { item_id: o.id, output_index: o.index, delta: args });
  }

  private get nextIndex(): number {
    return this.output.length + (this.open ? 1 : 0);
  }

  /**
   * An item made before the answer (a server-side compaction): output_item.added and .done at the next
   * index, and its pass's usage counted in the Response's.
   */
  before(item: OutputItem, usage: CanonicalChunk['usage']): ResponsesEvent[] {
    const out: ResponsesEvent[] = [];
    this.start(out);
    this.close(out);
    const output_index = this.nextIndex;
    this.output.push(item);
    this.usageBefore = usage ?? null;
    this.itemBefore(out, output_index, item);
    return out;
  }

  push(chunk: CanonicalChunk): ResponsesEvent[] {
    const out: ResponsesEvent[] = [];
    // the served tier, before the events that carry a Response (OpenAI-compatible upstreams name it on every chunk)
    if (this.served === undefined && typeof chunk.service_tier === 'string') this.served = chunk.service_tier;
    this.start(out);
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    const delta = choice?.delta;
    if (delta?.reasoning_content) this.reasoningPiece(out, delta.reasoning_content);
    // a Claude upstream's signed blocks (Anthropic-native or Bedrock): the reasoning item's encrypted_content when it is done
    if (delta?.thinking_blocks?.length) {
      this.reasoning(out).blocks.push(...delta.thinking_blocks);
      this.thinking.push(...delta.thinking_blocks);
    }
    if (delta?.content) this.messageDelta(out, 'output_text', delta.content, responsesLogprobs((choice as { logprobs?: unknown }).logprobs));
    if (delta?.refusal) this.messageDelta(out, 'refusal', delta.refusal);
    for (const tc of delta?.tool_calls ?? []) {
      let t = this.byIndex.get(tc.index);
      if (!t || (tc.id && tc.id !== t.call.id)) {
        t = { call: { id: tc.id ?? newId('call'), type: 'function', function: { name: '', arguments: '' } }, held: '', streamed: false };
        this.tools.push(t);
        this.byIndex.set(tc.index, t);
      }
      if (tc.function?.name && !t.call.function.name) t.call.function.name = tc.function.name;
      const args = tc.function?.arguments ?? '';
      if (this.open?.kind === 'call' && this.open.tool === t) {
        this.callArguments(out, this.open, args);
        continue;
      }
      t.held += args;
      // another call's arguments still being written: this one waits (interleaved parallel calls)
      const writing = this.open?.kind === 'call' && !completeJson(this.open.call.function.arguments);
      if (!t.streamed && !writing) {
        this.closeOpen(out, 'completed');
        this.openCall(out, t);
      }
    }
    if (choice?.finish_reason) this.finish = choice.finish_reason;
    return out;
  }


  /** The items done so far and the open one, `incomplete` (it was cut by the failure). */
  protected partialOutput(): OutputItem[] {
    const o = this.open;
    if (!o) return [...this.output];
    const cut =
      o.kind === 'reasoning' ? reasoningItem(o.id, o.text, 'incomplete', o.blocks) : o.kind === 'message' ? messageItem(o.id, o.parts, 'incomplete') : functionCallItem(o.id, o.call, 'incomplete', this.frame.req);
    return [...this.output, cut];
  }

  end(): ResponsesEvent[] {
    const out: ResponsesEvent[] = [];
    this.start(out);
    this.close(out, cutShort(this.finish) ? 'incomplete' : 'completed');
    const response = responseObject(this.frame, this.output, this.finish ?? 'stop', this.usageBefore ? addUsage(this.usageBefore, this.usage) : this.usage, this.served);
    this.final = { response, assistant: assistantTurn(this.text, this.calls, this.thinking) };
    this.ev(out, response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
    return out;
  }
}
