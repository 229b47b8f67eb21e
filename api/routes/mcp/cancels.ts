import type { RedisClient } from '../../../shared/redis/connection';
import { keys } from '../../../shared/redis/keys';
import { ApiError } from '../../../shared/errors/ApiError';
import { logger } from '../../../shared/logger';
import { InFlightMap } from '../../../shared/in-flight-map';
import { forgetCancels, keepCancels, takeCancel } from './kept-cancels';

/**
 * MCP cancellation (`notifications/cancelled`) across pods. The server is stateless, so the client
 * sends the notification as a POST of its own, which any pod may serve, while the call it names
 * runs on the pod that took the call's POST (the SDK client does not abort that request). Every pod
 * keeps its tool calls in flight under (API key id, JSON-RPC id as the caller sent it); a
 * notification is published on one sharded channel, and the pod holding the call aborts it: its
 * job is cancelled, its reservations given back, and it is not billed unless the provider had
 * already answered. A notification that finds no call in flight on the pod that took it is also
 * kept a short while in Redis under its key (kept-cancels.ts: KEEP_MS, at most MAX_KEPT_PER_KEY per
 * key): a call of that key and id that starts meanwhile, on any pod, is cancelled at once and uses
 * the kept cancel up; a pod that aborts a call in flight drops the kept one (a later call reusing
 * the id is not the one it meant). Without sessions the key is the client's only identity: calls of
 * two clients of one key under the same id are cancelled together.
 */
export class McpCancels {
  /** Tool calls in flight by slot: an InFlightMap, so an ended call is not kept alive by the map's old tables (shared/in-flight-map.ts). */
  private readonly calls = new InFlightMap<Set<AbortController>>();
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
        if (ch !== channel) return;
        const hit = slotsIn(message).filter((slot) => this.abort(slot));
        if (hit.length) void this.forget(hit);
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
   * Registers a tool call in flight; its signal aborts on a cancel for it (one kept from before it
   * started, or one that comes while it runs) or when `parent` does (the client left). Call `done`
   * when the call ends.
   */
  async track(keyId: string, requestId: unknown, parent: AbortSignal): Promise<{ signal: AbortSignal; done(): void }> {
    const slot = slotOf(keyId, requestId);
    const c = new AbortController();
    const onParent = () => c.abort(parent.reason);
    if (parent.aborted) onParent();
    else parent.addEventListener('abort', onParent, { once: true });
    let set = this.calls.get(slot);
    if (!set) this.calls.set(slot, (set = new Set()));
    set.add(c);
    const handle = {
      signal: c.signal,
      done: () => {
        parent.removeEventListener('abort', onParent);
        set.delete(c);
        if (!set.size && this.calls.get(slot) === set) this.calls.delete(slot);
      },
    };
    // registered first: a cancel published from now on finds it; one kept before is taken here
    try {
      if (await takeCancel(this.redis, keyId, idOf(slot))) c.abort(cancelled());
    } catch (err) {
      logger.debug({ errorName: (err as Error)?.name }, 'MCP kept cancels not read'); // the call meets the outage itself
    }
    return handle;
  }

  /**
   * A client's `notifications/cancelled` for `requestIds` (one POST's, at most MAX_CANCELS_PER_POST
   * distinct ones): aborts them here and, in one published message, on every other pod.
   */
  async cancel(keyId: string, requestIds: Array<string | number>): Promise<void> {
    const slots = [...new Set(requestIds.map((id) => slotOf(keyId, id)))].slice(0, MAX_CANCELS_PER_POST);
    if (!slots.length) return;
    // kept before the publish: a call that registers after the publish still finds the kept cancel
    const unseen = slots.filter((slot) => !this.abort(slot));
    await keepCancels(this.redis, keyId, unseen.map(idOf)).catch((err: unknown) => logger.warn({ err }, 'MCP cancel not kept'));
    await this.redis.spublish(keys.mcpCancelChannel(), JSON.stringify(slots)).catch((err: unknown) => logger.warn({ err }, 'MCP cancel not published'));
  }

  /** Calls in flight on this pod (for tests and metrics). */
  get inFlight(): number {
    let n = 0;
    for (const set of this.calls.values()) n += set.size;
    return n;
  }

  /** Aborts the slot's calls in flight here; true when there were any. */
  private abort(slot: string): boolean {
    const set = this.calls.get(slot);
    for (const c of set ?? []) c.abort(cancelled());
    return !!set?.size;
  }

  /** Drops the kept cancels of slots whose calls were found in flight here. */
  private async forget(slots: string[]): Promise<void> {
    const byKey = new Map<string, string[]>();
    for (const slot of slots) byKey.set(keyOf(slot), [...(byKey.get(keyOf(slot)) ?? []), idOf(slot)]);
    for (const [keyId, ids] of byKey) await forgetCancels(this.redis, keyId, ids).catch((err: unknown) => logger.debug({ errorName: (err as Error)?.name }, 'MCP kept cancels not dropped'));
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
const keyOf = (slot: string) => slot.slice(0, slot.indexOf(' '));
/** The JSON-RPC id of a slot, in JSON. */
const idOf = (slot: string) => slot.slice(slot.indexOf(' ') + 1);

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
