import type { NativeStep, NativeTranscript } from '../../dispatch/native-search/loop';
import { messageItem, newId, reasoningItem, responseObject, type MessagePart, type OutputItem, type ResponseFrame } from './response';
import { ResponsesEventWriter, type ResponsesEvent } from './event-writer';
import { stepItems } from './native';
import { addUsage, type CanonicalUsage, type ThinkingBlock } from '../canonical';

/**
 * The Responses event sequence for a native search answer, item by item as the loop runs:
 * response.created / in_progress (at the first step), then per turn's reasoning a `reasoning` item
 * (output_item.added, content_part.added, one reasoning_text.delta per upstream piece as it arrives,
 * reasoning_text.done, content_part.done, output_item.done: as the plain path streams it), per web_search_call item
 * output_item.added, web_search_call.in_progress, .searching, .completed, output_item.done; per
 * message item its content part, the text deltas as the upstream streams them, then one
 * output_text.annotation.added per citation (known once the text is complete), the
 * done events; per client function call its argument events; finally response.completed.
 */
export class NativeResponsesStream extends ResponsesEventWriter {
  private readonly steps: NativeStep[] = [];
  readonly output: OutputItem[] = [];
  /** The message item being streamed, if one is open. */
  private openMessage: string | undefined;
  /** The reasoning item being streamed, if one is open. */
  private openReasoning: { id: string; text: string; blocks: ThinkingBlock[] } | undefined;
  /** The streamed reasoning item was closed by the turn's text: the turn's `reasoning` step that follows adds nothing. */
  private reasoningOut = false;

  constructor(
    frame: ResponseFrame,
    /** The organization the answer's seals are bound to. */
    private readonly orgId: string,
  ) {
    super(frame);
  }

  private item(out: ResponsesEvent[], item: OutputItem): void {
    const output_index = this.output.length;
    const item_id = item.id;
    if (item.type === 'reasoning') {
      // not streamed piece by piece (a turn is streamed only when the request is): whole
      const text = (item.content as Array<{ text: string }>)[0]?.text ?? '';
      this.reasoningAdded(out, output_index, item_id);
      if (text) this.reasoningDelta(out, output_index, item_id, text);
      this.output.push(item);
      this.reasoningDone(out, output_index, item, text);
      return;
    }
    if (item.type === 'web_search_call') {
      this.ev(out, 'response.output_item.added', { output_index, item: { type: 'web_search_call', id: item_id, status: 'in_progress', action: inProgressAction(item.action) } });
      this.ev(out, 'response.web_search_call.in_progress', { output_index, item_id });
      this.ev(out, 'response.web_search_call.searching', { output_index, item_id });
      if (item.status === 'completed') this.ev(out, 'response.web_search_call.completed', { output_index, item_id });
    } else if (item.type === 'message') {
      const part = (item.content as Array<{ text: string; annotations: unknown[] }>)[0];
      if (this.openMessage !== undefined) {
        // Its text went out delta by delta under the open item's id; the citations close it.
        item.id = this.openMessage;
        this.openMessage = undefined;
      } else {
        this.openItem(out, item_id);
        this.ev(out, 'response.output_text.delta', { item_id, output_index, content_index: 0, delta: part.text, logprobs: [] });
      }
      const messageId = item.id;
      part.annotations.forEach((annotation, annotation_index) => this.ev(out, 'response.output_text.annotation.added', { item_id: messageId, output_index, content_index: 0, annotation_index, annotation }));
      this.ev(out, 'response.output_text.done', { item_id: messageId, output_index, content_index: 0, text: part.text, logprobs: [] });
      this.ev(out, 'response.content_part.done', { item_id: messageId, output_index, content_index: 0, part });
    } else {
      const empty = item.type === 'function_call' ? { arguments: '' } : item.type === 'custom_tool_call' ? { input: '' } : {};
      this.ev(out, 'response.output_item.added', { output_index, item: { ...item, ...empty, status: 'in_progress' } });
      if (item.type === 'function_call') this.ev(out, 'response.function_call_arguments.delta', { item_id, output_index, delta: item.arguments });
      this.callDone(out, output_index, item);
    }
    this.output.push(item);
    this.ev(out, 'response.output_item.done', { output_index, item });
  }

  private openItem(out: ResponsesEvent[], item_id: string): void {
    const output_index = this.output.length;
    this.ev(out, 'response.output_item.added', { output_index, item: { type: 'message', id: item_id, status: 'in_progress', role: 'assistant', content: [] } });
    this.partAdded(out, item_id, output_index, 0, 'output_text');
  }

  /** The reasoning item being streamed, opened as needed. */
  private reasoningOpen(out: ResponsesEvent[]): { id: string; text: string; blocks: ThinkingBlock[] } {
    if (!this.openReasoning) {
      this.openReasoning = { id: newId('rs'), text: '', blocks: [] };
      this.reasoningAdded(out, this.output.length, this.openReasoning.id);
    }
    return this.openReasoning;
  }

  /** Signed thinking blocks of the turn streaming now (an Anthropic-native upstream's): the reasoning item's encrypted_content. */
  thinking(blocks: ThinkingBlock[]): ResponsesEvent[] {
    const out: ResponsesEvent[] = [];
    this.start(out);
    this.reasoningOpen(out).blocks.push(...blocks);
    return out;
  }

  /** A piece of the model's reasoning as the upstream produced it: opens the reasoning item at the first. */
  reasoning(delta: string): ResponsesEvent[] {
    const out: ResponsesEvent[] = [];
    this.start(out);
    const o = this.reasoningOpen(out);
    o.text += delta;
    this.reasoningDelta(out, this.output.length, o.id, delta);
    return out;
  }

  /** Ends the streamed reasoning item, if one is open (the turn's text or its step follows). */
  private closeReasoning(out: ResponsesEvent[]): void {
    const o = this.openReasoning;
    if (!o) return;
    this.openReasoning = undefined;
    this.reasoningOut = true;
    const item = reasoningItem(o.id, o.text, 'completed', o.blocks);
    const output_index = this.output.length;
    this.output.push(item);
    this.reasoningDone(out, output_index, item, o.text);
  }

  /** A piece of the model's text as the upstream produced it: opens the message item at the first. */
  text(delta: string): ResponsesEvent[] {
    const out: ResponsesEvent[] = [];
    this.start(out);
    this.closeReasoning(out);
    if (this.openMessage === undefined) {
      this.openMessage = newId('msg');
      this.openItem(out, this.openMessage);
    }
    this.ev(out, 'response.output_text.delta', { item_id: this.openMessage, output_index: this.output.length, content_index: 0, delta, logprobs: [] });
    return out;
  }

  push(step: NativeStep): ResponsesEvent[] {
    const out: ResponsesEvent[] = [];
    this.start(out);
    this.steps.push(step);
    const streamed = this.reasoningOut || this.openReasoning !== undefined;
    this.closeReasoning(out);
    this.reasoningOut = false;
    // the turn's reasoning went out piece by piece
    if (step.type === 'reasoning' && streamed) return out;
    for (const item of stepItems(this.steps, this.steps.length - 1, this.orgId, this.frame.req)) this.item(out, item);
    return out;
  }


  /** The usage of a pass made before the loop (a server-side compaction's), counted in the Response's. */
  private usageBefore: CanonicalUsage | null = null;

  /** An item made before the loop (a server-side compaction): output 0, whole. */
  before(item: OutputItem, usage: CanonicalUsage | null | undefined): ResponsesEvent[] {
    const out: ResponsesEvent[] = [];
    this.start(out);
    this.usageBefore = usage ?? null;
    this.itemBefore(out, this.output.length, item);
    this.output.push(item);
    return out;
  }

  protected partialOutput(): OutputItem[] {
    return [...this.output];
  }

  /** The last turn's refusal: a message item of its own with a `refusal` part, its events the plain path's (event-writer.ts partAdded, partDelta, partDone) in one piece. */
  private refusal(out: ResponsesEvent[], text: string): void {
    const part: MessagePart = { type: 'refusal', text };
    const item = messageItem(newId('msg'), [part]);
    const output_index = this.output.length;
    this.ev(out, 'response.output_item.added', { output_index, item: messageItem(item.id, [], 'in_progress') });
    this.partAdded(out, item.id, output_index, 0, 'refusal');
    this.partDelta(out, item.id, output_index, 0, 'refusal', text);
    this.partDone(out, item.id, output_index, 0, part);
    this.output.push(item);
    this.ev(out, 'response.output_item.done', { output_index, item });
  }

  /** The closing event and the final Response object. */
  end(t: NativeTranscript): { events: ResponsesEvent[]; response: Record<string, unknown> } {
    const out: ResponsesEvent[] = [];
    this.start(out);
    if (t.refusal?.text) this.refusal(out, t.refusal.text);
    const response = responseObject(this.frame, this.output, t.finish ?? 'stop', this.usageBefore ? addUsage(this.usageBefore, t.usage) : t.usage);
    this.ev(out, response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
    return { events: out, response };
  }
}

/** The action as announced before it ran: a search's query (its sources come later), or the page. */
function inProgressAction(action: unknown): Record<string, unknown> {
  const a = (action ?? {}) as { type?: string; query?: string; url?: string };
  return a.type === 'open_page' ? { type: 'open_page', url: a.url } : { type: 'search', query: a.query };
}
