import type { Socket } from 'net';
import { Redis, type Cluster } from 'ioredis';

/**
 * Commands written on one connection during one iteration of the event loop leave in one socket
 * write: the first write corks the socket and the uncork is queued with `setImmediate`, which runs
 * once the loop has run every callback that was ready in this iteration (each HTTP request read,
 * each Redis reply, each timer due) and their microtasks, so no command waits past the iteration it
 * was issued in, and the loop does not block in between (a pending immediate makes its poll return
 * at once). At load one iteration holds several requests, and their job adds (or a worker's several
 * results and fetches) go out as one `writev` instead of one `write` each, which is what loopback
 * and virtualised sockets charge for (docs/benchmark.md: JSON c64 1.11x the requests a second and
 * 0.86x the CPU of uncorking after each callback, `REDIS_CORK_UNTIL=tick`). The price: a command
 * waits for the iteration's other callbacks (a burst of requests read in one poll), at most until
 * 64 KB are held, where it is written at once; the latency a request loses there it gains back
 * from the CPU saved, at every load the bench measures (c1, c16, c64). ioredis's
 * auto-pipelining batches the same commands into Pipeline objects instead, at a cost measured
 * higher than its gain.
 */
const CORKED = Symbol('gw.corkedPerTurn');
/** On a corked socket: writes what it holds now and stays corked for the rest of the iteration. */
const WRITE_NOW = Symbol('gw.writeNow');
/** What a corked socket holds at most before it writes what it has and corks again. */
const MAX_CORKED_BYTES = 64 * 1024;

/**
 * When a corked socket writes what it holds: `iteration` (default), at the end of the event-loop
 * iteration (`setImmediate`); `tick`, after the callback that wrote first and its microtasks
 * (`process.nextTick`), as node's HTTP responses do. REDIS_CORK_UNTIL.
 */
export type CorkUntil = 'iteration' | 'tick';

const uncorkLater: Record<CorkUntil, (f: () => void) => void> = {
  iteration: (f) => void setImmediate(f),
  tick: (f) => process.nextTick(f),
};

type CorkedSocket = Socket & { [CORKED]?: true; [WRITE_NOW]?: () => void };

/** The corked sockets that hold commands now (each until its uncork). */
const holding = new Set<() => void>();
/** The flush `flushAfterQueuedImmediates` queued, not yet run. */
let trailing: NodeJS.Immediate | undefined;

const flushHolding = (): void => {
  trailing = undefined;
  for (const uncork of holding) uncork();
};

/**
 * Writes what every corked socket holds once the immediates queued so far have run (and their
 * microtasks), still in this iteration's check phase. For work that waits for the poll phase to end
 * (`Directory.sync`'s setImmediate) and then issues commands: those would otherwise be corked from
 * inside the check phase, whose own setImmediate runs only in the next iteration. Called again
 * before that flush ran, it moves the flush behind the immediates queued since, so a burst of
 * requests read in one poll still sends their commands in one write per socket.
 */
export function flushAfterQueuedImmediates(): void {
  if (trailing) clearImmediate(trailing);
  trailing = setImmediate(flushHolding);
}

function corkSocket(socket: Socket, until: CorkUntil): void {
  const s = socket as CorkedSocket;
  if (s[CORKED]) return;
  s[CORKED] = true;
  const write = s.write;
  const later = uncorkLater[until];
  let corked = false;
  const uncork = () => {
    if (!corked) return; // written already (flushAfterQueuedImmediates)
    corked = false;
    holding.delete(uncork);
    s.uncork();
  };
  s[WRITE_NOW] = () => {
    if (!corked) return;
    s.uncork();
    s.cork();
  };
  s.write = function corkedWrite(this: Socket, ...args: unknown[]) {
    if (!corked && !s.destroyed) {
      corked = true;
      holding.add(uncork);
      s.cork();
      later(uncork);
    }
    const ok = (write as (...a: unknown[]) => boolean).apply(this, args);
    // A burst (hundreds of requests' commands in one iteration) leaves in writes of at most this much:
    // one large writev of strings is copied into one native buffer, which raised a web pod's peak
    // memory under a burst of 2,000 streams (docs/benchmark.md).
    if (corked && s.writableLength >= MAX_CORKED_BYTES) {
      s.uncork();
      s.cork();
    }
    return ok;
  } as Socket['write'];
}

/**
 * Writes at once what `client`'s corked sockets hold, instead of at the end of the iteration: for a
 * command whose latency is the user's (a stream's first chunk), when the rest of the iteration may run on
 * (the other events of the same upstream read).
 */
export function writeNow(client: Redis | Cluster): void {
  const nodes = client instanceof Redis ? [client] : client.nodes();
  for (const r of nodes) (r as unknown as { stream?: CorkedSocket }).stream?.[WRITE_NOW]?.();
}

/** Corks each socket of `client` (until the end of each loop iteration by default), on every (re)connect; a cluster's node connections alike. */
export function corkPerTurn(client: Redis | Cluster, until: CorkUntil = 'iteration'): void {
  const hook = (r: Redis) => {
    const apply = () => {
      const stream = (r as unknown as { stream?: Socket }).stream;
      if (stream && typeof stream.cork === 'function') corkSocket(stream, until);
    };
    r.on('connect', apply);
    apply();
  };
  if (client instanceof Redis) hook(client);
  else client.on('+node', (node: Redis) => hook(node));
}
