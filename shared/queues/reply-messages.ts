import type { WireError } from '../errors/ApiError';
import type { UsageRecord } from '../metering/usage';
import type { RouteMeta } from './route-meta';

/**
 * Messages on a pod's reply channel. `s` orders chunks; `b` carries consecutive chunks `s`, `s+1`, ...
 * that the worker produced in one event-loop turn; the final `r` tells how many chunks came before it
 * so the pod knows whether it missed any. `m`: where a long routed job's router stands (route-report.ts),
 * kept by the pod for the answers it gives without the worker; it is not a chunk and takes no sequence number.
 */
export type ReplyMessage =
  | { i: string; t: 'c'; s: number; d: string }
  | { i: string; t: 'b'; s: number; d: string[] }
  /**
   * `u`: a batch line's usage record, carried to the batch runner, which bills it with the line (docs/batches.md).
   * `h`: a stream's last chunks, `h.s`, `h.s+1`, ..., that were still held when the result was ready:
   * delivered before the result, one message instead of two (reply-publisher.ts).
   */
  | { i: string; t: 'r'; n: number; d: unknown; u?: UsageRecord; h?: { s: number; d: string[] } }
  | { i: string; t: 'e'; d: WireError }
  | { i: string; t: 'm'; d: RouteMeta };
