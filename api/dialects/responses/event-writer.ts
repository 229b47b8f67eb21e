import { responseObject, type ResponseFrame } from './response';

export type ResponsesEvent = { type: string; sequence_number: number } & Record<string, unknown>;

/**
 * What every Responses event stream shares: the sequence numbers, the opening response.created and
 * response.in_progress pair (sent once), and the in-band `error` event. The plain translator
 * (stream.ts) and the native-search stream (native-stream.ts) each add their output items.
 */
export abstract class ResponsesEventWriter {
  private seq = 0;
  private started = false;

  constructor(protected readonly frame: ResponseFrame) {}

  protected ev(out: ResponsesEvent[], type: string, fields: Record<string, unknown>): void {
    out.push({ type, sequence_number: this.seq++, ...fields });
  }

  protected start(out: ResponsesEvent[]): void {
    if (this.started) return;
    this.started = true;
    this.ev(out, 'response.created', { response: responseObject(this.frame, [], 'in_progress', null) });
    this.ev(out, 'response.in_progress', { response: responseObject(this.frame, [], 'in_progress', null) });
  }

  /** The in-band `error` event for a failure after the stream started. */
  error(code: string, message: string): ResponsesEvent {
    return { type: 'error', sequence_number: this.seq++, code, message, param: null };
  }
}
