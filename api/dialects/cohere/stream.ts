import type { CanonicalChunk, CanonicalUsage, FinishReason } from '../canonical';
import { matchedStop } from '../messages/response';
import { cohereFinish, cohereUsage } from './response';

export type CohereEvent = { type: string } & Record<string, unknown>;

/**
 * Canonical chat chunks → Cohere's v2 chat stream events (StreamedChatResponseV2): `message-start`;
 * for the text, `content-start`, `content-delta`..., `content-end` (index 0); per tool call
 * `tool-call-start` (its id, name and empty arguments), `tool-call-delta`... (arguments),
 * `tool-call-end`, each with the call's index; and `message-end` with the finish reason and usage.
 */
export class CohereStreamTranslator {
  private started = false;
  private textOpen = false;
  private textDone = false;
  private openCall: number | undefined;
  /** The upstream's index of the open call (a new index starts the next call). */
  private openIndex: number | undefined;
  private calls = 0;
  private finish: FinishReason = null;
  private matched: string | null = null;
  private usage: CanonicalUsage | null = null;

  constructor(
    private readonly id: string,
    private readonly stopSequences?: string[],
  ) {}

  private start(out: CohereEvent[]): void {
    if (this.started) return;
    this.started = true;
    out.push({ type: 'message-start', id: this.id, delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } });
  }

  private closeText(out: CohereEvent[]): void {
    if (!this.textOpen) return;
    this.textOpen = false;
    this.textDone = true;
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
    if (text && !this.textDone) {
      if (!this.textOpen) {
        this.textOpen = true;
        out.push({ type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } });
      }
      out.push({ type: 'content-delta', index: 0, delta: { message: { content: { text } } } });
    }
    for (const tc of choice?.delta?.tool_calls ?? []) {
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
    this.closeText(out);
    this.closeCall(out);
    out.push({ type: 'message-end', id: this.id, delta: { finish_reason: cohereFinish(this.finish, this.matched), usage: cohereUsage(this.usage) } });
    return out;
  }

  /** A stream that failed after it started ends with `message-end` whose finish reason is ERROR and `error` the message. */
  failed(message: string): CohereEvent[] {
    const out: CohereEvent[] = [];
    this.start(out);
    this.closeText(out);
    this.closeCall(out);
    out.push({ type: 'message-end', id: this.id, delta: { finish_reason: 'ERROR', error: message, usage: cohereUsage(this.usage) } });
    return out;
  }
}
