import type { CanonicalChunk, CanonicalToolCall, CanonicalUsage, FinishReason } from '../canonical';
import { matchedStop } from '../messages/response';
import type { CohereV1ChatRequest } from './v1-request';
import { toolPlan, v1Finish, v1Response, v1ToolCall, type V1Ids } from './v1-response';

export type CohereV1Event = { event_type: string; is_finished: boolean } & Record<string, unknown>;

/**
 * Canonical chat chunks → Cohere's v1 chat stream (StreamedChatResponse): `stream-start` (the
 * generation id), `text-generation` per text delta, `tool-calls-chunk` per tool call delta (its index,
 * name, then its parameters' text), `tool-calls-generation` with the whole calls once the answer
 * ended, and `stream-end` (`is_finished: true`) with the finish reason and the whole response.
 */
export class CohereV1StreamTranslator {
  private started = false;
  private text = '';
  private readonly calls: CanonicalToolCall[] = [];
  private finish: FinishReason = null;
  private matched: string | null = null;
  private usage: CanonicalUsage | null = null;

  constructor(
    private readonly req: CohereV1ChatRequest,
    private readonly ids: V1Ids,
  ) {}

  private ev(out: CohereV1Event[], event_type: string, fields: Record<string, unknown> = {}, finished = false): void {
    out.push(Object.assign({ is_finished: finished, event_type }, fields));
  }

  private start(out: CohereV1Event[]): void {
    if (this.started) return;
    this.started = true;
    this.ev(out, 'stream-start', { generation_id: this.ids.generationId });
  }

  push(chunk: CanonicalChunk): CohereV1Event[] {
    const out: CohereV1Event[] = [];
    this.start(out);
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    const text = choice?.delta?.content;
    if (text) {
      this.text += text;
      this.ev(out, 'text-generation', { text });
    }
    for (const tc of choice?.delta?.tool_calls ?? []) {
      let call = this.calls[tc.index];
      if (!call) {
        call = this.calls[tc.index] = { id: tc.id ?? '', type: 'function', function: { name: tc.function?.name ?? '', arguments: '' } };
        this.ev(out, 'tool-calls-chunk', { tool_call_delta: { index: tc.index, name: call.function.name } });
      }
      const args = tc.function?.arguments;
      if (args) {
        call.function.arguments += args;
        this.ev(out, 'tool-calls-chunk', { tool_call_delta: { index: tc.index, parameters: args } });
      }
    }
    if (choice?.finish_reason) {
      this.finish = choice.finish_reason;
      this.matched = matchedStop(choice, this.req.stop_sequences);
    }
    return out;
  }

  /** The end: `tool-calls-generation` when tools were called, then `stream-end` with the response (its finish reason one the stream's document allows). */
  end(): CohereV1Event[] {
    const out: CohereV1Event[] = [];
    this.start(out);
    const calls = this.calls.filter(Boolean).map(v1ToolCall);
    if (calls.length) this.ev(out, 'tool-calls-generation', { text: this.text || toolPlan(calls), tool_calls: calls });
    const finish = v1Finish(this.finish, this.matched);
    const response = v1Response(this.req, this.ids, this.text, calls, finish, this.usage);
    this.ev(out, 'stream-end', { finish_reason: finish === 'STOP_SEQUENCE' ? 'COMPLETE' : finish, response }, true);
    return out;
  }

  /** A stream that failed after it started ends with `stream-end`, finish reason ERROR, and the error's message in `response.text`. */
  failed(message: string): CohereV1Event[] {
    const out: CohereV1Event[] = [];
    this.start(out);
    this.ev(out, 'stream-end', { finish_reason: 'ERROR', response: v1Response(this.req, this.ids, this.text || message, [], 'ERROR', this.usage) }, true);
    return out;
  }
}
