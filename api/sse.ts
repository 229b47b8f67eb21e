import type { Response } from 'express';
import { ApiError } from '../shared/errors/ApiError';
import { ClientGone } from '../shared/errors/ClientGone';
import { logState } from './middleware/request-log';
import { Keepalive } from './sse-keepalive';

/**
 * Server-sent events. The events of one tick (the chunks that came in one read of the reply
 * channel) leave in one `res.write` at the end of that tick: one chunked-encoding frame and one
 * socket write instead of one per event, the headers with the first of them. No event waits past
 * the tick it was sent in.
 */
export class SseWriter {
  private started = false;
  /** Framed events of the current tick, not yet written. */
  private readonly pending: string[] = [];
  /** keepAlive's timer, and when the stream last wrote (Date.now(); noted only while it runs). */
  private keepalive: Keepalive | undefined;
  private wroteAt = 0;
  /**
   * `lines`: newline-delimited JSON instead (`application/stream+json`, each event its data and a
   * newline): Cohere's v1 chat stream unless the client asks for server-sent events.
   */
  constructor(
    private readonly res: Response,
    private readonly lines = false,
  ) {}

  get isStarted(): boolean {
    return this.started;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.res.status(200);
    this.res.setHeader('Content-Type', this.lines ? 'application/stream+json; charset=utf-8' : 'text/event-stream; charset=utf-8');
    this.res.setHeader('Cache-Control', 'no-cache');
    this.res.setHeader('Connection', 'keep-alive');
    this.res.setHeader('X-Accel-Buffering', 'no');
    this.res.socket?.setNoDelay(true);
    // The headers leave with the first events, in the same socket write, at the end of the tick the
    // first event came in (flushing them alone a tick earlier cost a write per stream: at c64 0.94x
    // the CPU and 1.08x the throughput without it, no difference in time to first byte at c1).
  }

  /** A failure reported in-band (the headers are out): the request log records its status and code. */
  failed(e: ApiError): void {
    const log = logState(this.res);
    if (log) log.failure = { status: e.status, code: e.code };
  }

  /** `data: <payload>` with an optional `event:` line, written at the end of the current tick. */
  send(data: string, event?: string): void {
    this.start();
    if (this.pending.length === 0) process.nextTick(this.flush);
    this.pending.push(this.lines ? `${data}\n` : event ? `event: ${event}\ndata: ${data}\n\n` : `data: ${data}\n\n`);
  }

  /**
   * Sends `data` as event `event` whenever the stream has written nothing for `ms` (0: never), from
   * now until end(), failStream or the client leaving; before the first event too, which sends the
   * headers (a later failure is then the dialect's in-band error). The messages dialect's `ping`.
   */
  keepAlive(ms: number, data: string, event: string): void {
    if (ms <= 0 || this.keepalive || this.res.writableEnded || this.res.destroyed) return;
    this.wroteAt = Date.now();
    this.keepalive = new Keepalive(ms, () => (this.pending.length ? 0 : Date.now() - this.wroteAt), () => {
      if (this.res.writableEnded || this.res.destroyed) this.stopKeepalive();
      else this.send(data, event);
    });
    this.res.once('close', this.stopKeepalive);
  }

  readonly stopKeepalive = (): void => {
    this.keepalive?.stop();
    this.keepalive = undefined;
  };

  /** Writes what is pending and ends the response, in one socket write. */
  end(): void {
    this.stopKeepalive();
    this.start();
    const text = this.take();
    if (this.res.writableEnded) return;
    if (text) this.res.end(text);
    else this.res.end();
  }

  private readonly flush = (): void => {
    const text = this.take();
    if (text && !this.res.writableEnded && !this.res.destroyed) {
      this.res.write(text);
      if (this.keepalive) this.wroteAt = Date.now();
    }
  };

  /**
   * The pending events as one text; the array is emptied, not replaced: a new array per tick lived
   * until the stream's next event, long enough that V8 allocated all of them in the old generation
   * (allocation-site pretenuring), where 2,000 held streams piled up garbage only a full collection frees.
   */
  private take(): string {
    const p = this.pending;
    if (p.length === 0) return '';
    const text = p.length === 1 ? p[0] : p.join('');
    p.length = 0;
    return text;
  }
}

/**
 * The end of a stream whose request failed: a client that left is owed nothing; before the headers
 * went out the error is thrown for the error handler to answer; after them `inBand` writes the
 * dialect's in-band failure (recorded for the request log) and the stream ends.
 */
export function failStream(sse: SseWriter, err: unknown, inBand: (e: ApiError) => void): void {
  sse.stopKeepalive();
  if (err instanceof ClientGone) return;
  if (!sse.isStarted) throw err;
  const e = err instanceof ApiError ? err : new ApiError(502, 'upstream_error', 'The stream failed.');
  sse.failed(e);
  inBand(e);
  sse.end();
}
