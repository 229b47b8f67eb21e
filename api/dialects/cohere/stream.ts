import type { CanonicalChunk, CanonicalUsage, FinishReason } from '../canonical';
import { matchedStop } from '../messages/response';
import { cohereFinish, cohereUsage } from './response';
import type { CohereChatRequest } from './request';

export type CohereEvent = { type: string } & Record<string, unknown>;

/**
 * Canonical chat chunks → Cohere's v2 chat stream events (StreamedChatResponseV2): `message-start`;
 * for the text, `content-start`, `content-delta`..., `content-end` (index 0); the text of an answer
 * that calls tools as `tool-plan-delta`s (Cohere's `message.tool_plan`); per tool call
 * `tool-call-start` (its id, name and empty arguments), `tool-call-delta`... (arguments),
 * `tool-call-end`, each with the call's index; and `message-end` with the finish reason and usage.
 *
 * Whether text is the answer or the plan is known only once a tool call starts or the answer ends:
 * when the request offers tools (and `tool_choice` is not `NONE`) the text is held until then, and
 * goes out as `tool-plan-delta`s before the first call, or as the content at the end, one
 * `content-delta` per delta held. Text after a call started is plan too (as the JSON answer has it).
 */
export class CohereStreamTranslator {
  private started = false;
  private textOpen = false;
  /** The text deltas held while it is not known whether they are the answer or the plan (only when tools are offered). */
  private held: string[] | undefined;
  private openCall: number | undefined;
  /** The upstream's index of the open call (a new index starts the next call). */
  private openIndex: number | undefined;
  private calls = 0;
  private finish: FinishReason = null;
  private matched: string | null = null;
  private usage: CanonicalUsage | null = null;
  private readonly stopSequences?: string[];

  constructor(
    private readonly id: string,
    request: Pick<CohereChatRequest, 'stop_sequences' | 'tools' | 'tool_choice'> = {},
  ) {
    this.stopSequences = request.stop_sequences;
    if (request.tools?.length && request.tool_choice !== 'NONE') this.held = [];
  }

  private start(out: CohereEvent[]): void {
    if (this.started) return;
    this.started = true;
    out.push({ type: 'message-start', id: this.id, delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } });
  }

  private text(out: CohereEvent[], text: string): void {
    if (!this.textOpen) {
      this.textOpen = true;
      out.push({ type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } });
    }
    out.push({ type: 'content-delta', index: 0, delta: { message: { content: { text } } } });
  }

  private plan(out: CohereEvent[], tool_plan: string): void {
    out.push({ type: 'tool-plan-delta', delta: { message: { tool_plan } } });
  }

  /** Text held with no tool call after it: the answer's content after all. */
  private releaseHeld(out: CohereEvent[]): void {
    for (const t of this.held?.splice(0) ?? []) this.text(out, t);
  }

  private closeText(out: CohereEvent[]): void {
    if (!this.textOpen) return;
    this.textOpen = false;
    out.push({ type: 'content-end', index: 0 });
  }

  private closeCall(out: CohereEvent[]): void {
    if (this.openCall === undefined) return;
    out.push({ type: 'tool-call-end', index: this.openCall });
    this.openCall = undefined;
  }

  push(chunk: CanonicalChunk): CohereEvent[] {
    const out: CohereEvent[] = [];
    this.start(out);
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    const text = choice?.delta?.content;
    if (text) {
      if (this.calls > 0) this.plan(out, text);
      else if (this.held) this.held.push(text);
      else this.text(out, text);
    }
    for (const tc of choice?.delta?.tool_calls ?? []) {
      // the text held before the first call was its plan
      for (const t of this.held?.splice(0) ?? []) this.plan(out, t);
      this.closeText(out);
      if (this.openCall === undefined || tc.index !== this.openIndex) {
        this.closeCall(out);
        this.openCall = this.calls++;
        this.openIndex = tc.index;
        out.push({ type: 'tool-call-start', index: this.openCall, delta: { message: { tool_calls: { id: tc.id ?? `call_${this.openCall}`, type: 'function', function: { name: tc.function?.name ?? '', arguments: '' } } } } });
      }
      if (tc.function?.arguments) out.push({ type: 'tool-call-delta', index: this.openCall, delta: { message: { tool_calls: { function: { arguments: tc.function.arguments } } } } });
    }
    if (choice?.finish_reason) {
      this.finish = choice.finish_reason;
      this.matched = matchedStop(choice, this.stopSequences);
    }
    return out;
  }

  end(): CohereEvent[] {
    const out: CohereEvent[] = [];
    this.start(out);
    this.releaseHeld(out);
    this.closeText(out);
    this.closeCall(out);
    out.push({ type: 'message-end', id: this.id, delta: { finish_reason: cohereFinish(this.finish, this.matched), usage: cohereUsage(this.usage) } });
    return out;
  }

  /** A stream that failed after it started ends with `message-end` whose finish reason is ERROR and `error` the message. */
  failed(message: string): CohereEvent[] {
    const out: CohereEvent[] = [];
    this.start(out);
    this.releaseHeld(out);
    this.closeText(out);
    this.closeCall(out);
    out.push({ type: 'message-end', id: this.id, delta: { finish_reason: 'ERROR', error: message, usage: cohereUsage(this.usage) } });
    return out;
  }
}
