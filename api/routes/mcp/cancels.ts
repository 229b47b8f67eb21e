import type { RedisClient } from '../../../shared/redis/connection';
import { keys } from '../../../shared/redis/keys';
import { ApiError } from '../../../shared/errors/ApiError';
import { logger } from '../../../shared/logger';

/**
 * MCP cancellation (`notifications/cancelled`) across pods. The server is stateless, so the client
 * sends the notification as a POST of its own, which any pod may serve, while the call it names
 * runs on the pod that took the call's POST (the SDK client does not abort that request). Every pod
 * keeps its tool calls in flight under (API key id, JSON-RPC id as the caller sent it); a
 * notification is published on one sharded channel, and the pod holding the call aborts it: its
 * job is cancelled, its reservations given back, and it is not billed unless the provider had
 * already answered. Only calls in flight are cancelled: a notification that arrives before its call
 * started, or while the subscriber reconnects, is not remembered (the MCP spec's SHOULD; remembering
 * would cancel a later call that reuses the id). Without sessions the key is the client's only
 * identity: calls of two clients of one key in flight under the same id are cancelled together.
 */
export class McpCancels {
  private readonly calls = new Map<string, Set<AbortController>>();
  private subscribed: Promise<void> | undefined;
  private listening = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly sub: RedisClient,
  ) {}

  /** Subscribes this pod (once, with its first MCP request: a pod that never ran a call has none to cancel). */
  listen(): Promise<void> {
    const channel = keys.mcpCancelChannel();
    if (!this.listening) {
      this.listening = true;
      this.sub.on('smessage', (ch: string, message: string) => {
        if (ch === channel) for (const slot of slotsIn(message)) this.abort(slot);
      });
    }
    this.subscribed ??= this.sub.ssubscribe(channel).then(
      () => undefined,
      (err: unknown) => {
        this.subscribed = undefined; // the next request tries again
        throw err;
      },
    );
    return this.subscribed;
  }

  /**
   * Registers a tool call in flight; its signal aborts on a cancel for it or when `parent` does (the
   * client left). Call `done` when the call ends.
   */
  track(keyId: string, requestId: unknown, parent: AbortSignal): { signal: AbortSignal; done(): void } {
    const slot = slotOf(keyId, requestId);
    const c = new AbortController();
    const onParent = () => c.abort(parent.reason);
    if (parent.aborted) onParent();
    else parent.addEventListener('abort', onParent, { once: true });
    let set = this.calls.get(slot);
    if (!set) this.calls.set(slot, (set = new Set()));
    set.add(c);
    return {
      signal: c.signal,
      done: () => {
        parent.removeEventListener('abort', onParent);
        set.delete(c);
        if (!set.size && this.calls.get(slot) === set) this.calls.delete(slot);
      },
    };
  }

  /**
   * A client's `notifications/cancelled` for `requestIds` (one POST's, at most MAX_CANCELS_PER_POST
   * distinct ones): aborts them here and, in one published message, on every other pod.
   */
  async cancel(keyId: string, requestIds: Array<string | number>): Promise<void> {
    const slots = [...new Set(requestIds.map((id) => slotOf(keyId, id)))].slice(0, MAX_CANCELS_PER_POST);
    if (!slots.length) return;
    for (const slot of slots) this.abort(slot);
    await this.redis.spublish(keys.mcpCancelChannel(), JSON.stringify(slots)).catch((err: unknown) => logger.warn({ err }, 'MCP cancel not published'));
  }

  /** Calls in flight on this pod (for tests and metrics). */
  get inFlight(): number {
    let n = 0;
    for (const set of this.calls.values()) n += set.size;
    return n;
  }

  private abort(slot: string): void {
    for (const c of this.calls.get(slot) ?? []) c.abort(cancelled());
  }
}

/**
 * Cancels one POST may carry: a client cancels the calls it has in flight, a few at a time; a body of
 * thousands would otherwise make every pod do that many lookups for one request.
 */
export const MAX_CANCELS_PER_POST = 32;

/** The slots of one published message (a JSON array of strings); anything else names none. */
function slotsIn(message: string): string[] {
  try {
    const v = JSON.parse(message) as unknown;
    return Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string').slice(0, MAX_CANCELS_PER_POST) : [];
  } catch {
    return [];
  }
}

/** The key id and the JSON-RPC id as sent (1 and "1" differ). */
const slotOf = (keyId: string, requestId: unknown) => `${keyId} ${JSON.stringify(requestId)}`;

const cancelled = () => new ApiError(499, 'client_closed_request', 'The client cancelled this call (notifications/cancelled).');

/** The request ids named by the `notifications/cancelled` messages of a POST body (a message or a batch). */
export function cancelledIds(body: unknown): Array<string | number> {
  const out: Array<string | number> = [];
  for (const m of Array.isArray(body) ? body : [body]) {
    if (!m || typeof m !== 'object' || (m as { method?: unknown }).method !== 'notifications/cancelled' || 'id' in m) continue;
    const id = (m as { params?: { requestId?: unknown } }).params?.requestId;
    if (typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id))) out.push(id);
  }
  return out;
}
