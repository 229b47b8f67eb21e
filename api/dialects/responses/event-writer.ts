import type { ApiError } from '../../../shared/errors/ApiError';
import { contentPart, failedResponse, reasoningItem, reasoningText, responseObject, type LogProb, type MessagePart, type OutputItem, type ResponseFrame } from './response';
import { answeredFields } from './client-view';

export type ResponsesEvent = { type: string; sequence_number: number } & Record<string, unknown>;

/**
 * What every Responses event stream shares: the sequence numbers, the opening response.created and
 * response.in_progress pair (sent once; a background stream's response.created and response.queued first), and the `response.failed` end of a stream that failed. The plain translator
 * (stream.ts) and the native-search stream (native-stream.ts) each add their output items.
 * Events are what the client gets: the items and Responses they carry are shown to the request's
 * `include` (client-view.ts: a reasoning item's `encrypted_content` only when it asks), while the
 * writers keep them whole for the store (their final and failed Responses); a background stream's
 * writer makes them whole (keepWhole).
 */
export abstract class ResponsesEventWriter {
  private seq = 0;
  private created = false;
  private started = false;
  private whole = false;
  /**
   * The tier the upstream reports it served the request on (the first chunk's `service_tier` that
   * names one), for every Response the events carry from then on (served-tier.ts). Set by a writer
   * before the events of the chunk that names it; until then (a background stream's queued events,
   * a compaction before the answer) the Responses report `default`.
   */
  protected served: unknown;

  constructor(protected readonly frame: ResponseFrame) {}

  /**
   * The events are made whole from now on: a background stream's, kept so for every client that reads
   * them, each shown them as its own `include` asks (api/routes/responses/background.ts, background-stream.ts).
   */
  keepWhole(): void {
    this.whole = true;
  }

  protected ev(out: ResponsesEvent[], type: string, fields: Record<string, unknown>): void {
    out.push({ type, sequence_number: this.seq++, ...(this.whole ? fields : answeredFields(fields, this.frame.req)) });
  }

  protected start(out: ResponsesEvent[]): void {
    if (this.started) return;
    this.started = true;
    if (!this.created) this.ev(out, 'response.created', { response: responseObject(this.frame, [], 'in_progress', null, this.served) });
    this.created = true;
    this.ev(out, 'response.in_progress', { response: responseObject(this.frame, [], 'in_progress', null, this.served) });
  }

  /**
   * A background stream's opening, before its run starts: response.created and response.queued, each
   * with the Response `queued`; response.in_progress follows when the run's first events do.
   */
  queued(): ResponsesEvent[] {
    const out: ResponsesEvent[] = [];
    if (this.created) return out;
    this.created = true;
    const queued = () => Object.assign(responseObject(this.frame, [], 'in_progress', null), { status: 'queued' });
    this.ev(out, 'response.created', { response: queued() });
    this.ev(out, 'response.queued', { response: queued() });
    return out;
  }

  /** A message's content part opened (an output_text's or a refusal's): content_part.added, the part empty. */
  protected partAdded(out: ResponsesEvent[], item_id: string, output_index: number, content_index: number, type: MessagePart['type']): void {
    this.ev(out, 'response.content_part.added', { item_id, output_index, content_index, part: contentPart({ type, text: '' }) });
  }

  /** A piece of a message part's text: refusal.delta, or output_text.delta with the piece's tokens as OpenAI's ResponseLogProb (token, logprob, top_logprobs). */
  protected partDelta(out: ResponsesEvent[], item_id: string, output_index: number, content_index: number, type: MessagePart['type'], delta: string, logprobs: LogProb[] = []): void {
    if (type === 'refusal') return this.ev(out, 'response.refusal.delta', { item_id, output_index, content_index, delta });
    const deltaLogprobs = logprobs.map((t) => ({ token: t.token, logprob: t.logprob, top_logprobs: t.top_logprobs.map((a) => ({ token: a.token, logprob: a.logprob })) }));
    this.ev(out, 'response.output_text.delta', { item_id, output_index, content_index, delta, logprobs: deltaLogprobs });
  }

  /** A message's content part complete: refusal.done or output_text.done, then content_part.done. */
  protected partDone(out: ResponsesEvent[], item_id: string, output_index: number, content_index: number, p: MessagePart): void {
    if (p.type === 'refusal') this.ev(out, 'response.refusal.done', { item_id, output_index, content_index, refusal: p.text });
    else this.ev(out, 'response.output_text.done', { item_id, output_index, content_index, text: p.text, logprobs: p.logprobs ?? [] });
    this.ev(out, 'response.content_part.done', { item_id, output_index, content_index, part: contentPart(p) });
  }

  /** A reasoning item opened at `output_index`: output_item.added (no content yet) and its one `reasoning_text` part's content_part.added. */
  protected reasoningAdded(out: ResponsesEvent[], output_index: number, item_id: string): void {
    this.ev(out, 'response.output_item.added', { output_index, item: reasoningItem(item_id, '', 'in_progress') });
    this.ev(out, 'response.content_part.added', { item_id, output_index, content_index: 0, part: reasoningText('') });
  }

  /** A piece of a reasoning item's text: response.reasoning_text.delta. */
  protected reasoningDelta(out: ResponsesEvent[], output_index: number, item_id: string, delta: string): void {
    this.ev(out, 'response.reasoning_text.delta', { item_id, output_index, content_index: 0, delta });
  }

  /** A reasoning item's text complete: reasoning_text.done, content_part.done, then output_item.done with `item`. */
  protected reasoningDone(out: ResponsesEvent[], output_index: number, item: OutputItem, text: string): void {
    const at = { item_id: item.id, output_index, content_index: 0 };
    this.ev(out, 'response.reasoning_text.done', { ...at, text });
    this.ev(out, 'response.content_part.done', { ...at, part: reasoningText(text) });
    this.ev(out, 'response.output_item.done', { output_index, item });
  }

  /**
   * The events that close a tool call item's content, before its output_item.done: a function
   * call's arguments.done; a custom tool call's input (one delta, then done); a shell call's
   * commands (each added, one delta, done); an apply_patch, local shell or tool search call has none.
   */
  /** An item made before the answer (a server-side compaction), whole: its added and done events at `output_index`. */
  protected itemBefore(out: ResponsesEvent[], output_index: number, item: OutputItem): void {
    this.ev(out, 'response.output_item.added', { output_index, item });
    this.ev(out, 'response.output_item.done', { output_index, item });
  }

  protected callDone(out: ResponsesEvent[], output_index: number, item: Record<string, unknown> & { id: string; type: string }): void {
    const item_id = item.id;
    if (item.type === 'function_call') this.ev(out, 'response.function_call_arguments.done', { item_id, output_index, name: item.name, arguments: item.arguments });
    else if (item.type === 'custom_tool_call') {
      if (item.input) this.ev(out, 'response.custom_tool_call_input.delta', { item_id, output_index, delta: item.input });
      this.ev(out, 'response.custom_tool_call_input.done', { item_id, output_index, input: item.input });
    } else if (item.type === 'shell_call') {
      // OpenAI's ResponseShellCallCommandAdded/Delta/DoneEvent, each command whole in one delta
      const commands = (item.action as { commands: string[] }).commands;
      commands.forEach((command, command_index) => {
        this.ev(out, 'response.shell_call_command.added', { output_index, command_index, command: '' });
        this.ev(out, 'response.shell_call_command.delta', { output_index, command_index, delta: command });
        this.ev(out, 'response.shell_call_command.done', { output_index, command_index, command });
      });
    }
  }

  /** The output items produced so far, for the Response of a failed stream. */
  protected abstract partialOutput(): OutputItem[];

  /**
   * The end of a stream that failed after it started: `response.failed` carrying the Response with
   * `status: "failed"` and its `error` (response.created and in_progress first if nothing was sent),
   * and that Response whole, to be stored. No `error` event: the official SDK's ResponseStream ends
   * at an `error` event and would never read the `response.failed` after it (docs/dialects.md).
   */
  failed(e: ApiError): { events: ResponsesEvent[]; response: Record<string, unknown> } {
    const out: ResponsesEvent[] = [];
    this.start(out);
    const response = failedResponse(this.frame, this.partialOutput(), e, this.served);
    this.ev(out, 'response.failed', { response });
    return { events: out, response };
  }
}
