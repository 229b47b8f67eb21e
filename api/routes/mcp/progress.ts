import type { Response } from 'express';
import { SseWriter } from '../../sse';
import { config } from '../../../shared/config/env';

/**
 * Progress for tool calls that ask for it (MCP, basic/utilities/progress: a request whose
 * `_meta.progressToken` is set "MAY" get `notifications/progress` naming that token, whose `progress`
 * "MUST increase with each notification, even if the total is unknown").
 *
 * A POST is answered JSON (one object, or a batch's array) until a call that asked for progress has
 * run for MCP_PROGRESS_INTERVAL_MS (default 5 s): then the answer becomes an SSE stream (the
 * Streamable HTTP transport: "If the input is a JSON-RPC request, the server MUST either return
 * Content-Type: text/event-stream ... or Content-Type: application/json"; the client must take both),
 * carrying one notification per interval for each such call in flight and, last, the answer the POST
 * would have had as JSON (a batch's responses one event each: finish), after which the stream ends. A call that ends sooner, or asks no progress,
 * leaves the answer as it was. Each notification resets the official client's request timeout when it
 * calls with `resetTimeoutOnProgress` (its default timeout is 60 s; an image generation may take
 * longer). The stream has no event ids: the server is stateless and not resumable, so a client never
 * reconnects with Last-Event-ID (GET /mcp is 405).
 */
export class McpProgress {
  private sse?: SseWriter;
  private readonly stops = new Set<() => void>();

  /** `accepts`: the request's Accept lists text/event-stream (the transport refuses it 406 otherwise). */
  constructor(
    private readonly res: Response,
    private readonly accepts: boolean,
  ) {}

  /** Whether the answer is an SSE stream already (its headers sent or about to be). */
  get streaming(): boolean {
    return this.sse !== undefined;
  }

  /**
   * Sends progress for one call every interval while it runs; the function returned stops it (call it
   * when the call has its answer). `progress` is the seconds the call has run, no `total` (unknown).
   */
  track(token: string | number | undefined, tool: string): () => void {
    if (token === undefined || !this.accepts) return () => undefined;
    const every = config().mcpProgressIntervalMs;
    let ticks = 0;
    const timer = setInterval(() => {
      if (this.res.writableEnded || this.res.destroyed) return stop();
      const seconds = (++ticks * every) / 1000;
      const note = { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: seconds, message: `${tool}: working, ${seconds} s so far` } };
      (this.sse ??= new SseWriter(this.res)).send(JSON.stringify(note), 'message');
    }, every);
    const stop = () => {
      clearInterval(timer);
      this.stops.delete(stop);
    };
    this.stops.add(stop);
    return stop;
  }

  /** Stops every call's notifications (the client left, or the POST is answered). */
  stopAll(): void {
    for (const stop of [...this.stops]) stop();
  }

  /**
   * Ends the stream with the POST's answer as its last events: a JSON-RPC response as one event, a
   * batch's array as one event per response, in the batch's order. The official clients read each SSE
   * event as one JSON-RPC message (the TypeScript SDK's StreamableHTTPClientTransport parses
   * `event.data` with JSONRPCMessageSchema, which has no array; the SDK's own server sends a batch's
   * responses one event each): an array in one event was refused by the client and every response
   * of the batch lost.
   */
  finish(answer: string): void {
    this.stopAll();
    const sse = this.sse!;
    if (answer) {
      const parsed = JSON.parse(answer) as unknown;
      for (const m of Array.isArray(parsed) ? parsed : [parsed]) sse.send(JSON.stringify(m), 'message');
    }
    sse.end();
  }
}
