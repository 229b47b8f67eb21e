import type { Socket } from 'net';
import { Redis, type Cluster } from 'ioredis';

/**
 * Commands written on one connection during one turn of the event loop (a callback and the promise
 * continuations it sets off) leave in one socket write: the first write of a turn corks the socket
 * and the uncork is queued with `process.nextTick`, which runs once the turn's synchronous code and
 * microtasks are done, so no command waits past its own turn. Node's HTTP responses are written the
 * same way. At load, the replies of many requests arrive in one read and their next commands go out
 * together: one `writev` instead of one `write` per command, which is what loopback and
 * virtualised sockets charge for (docs/benchmark.md). ioredis's auto-pipelining batches the same
 * commands into Pipeline objects instead, at a cost measured higher than its gain.
 */
const CORKED = Symbol('gw.corkedPerTurn');
/** On a corked socket: writes what the turn holds now and stays corked for the rest of it. */
const WRITE_NOW = Symbol('gw.writeNow');
/** What a corked socket holds at most before it writes what it has and corks again. */
const MAX_CORKED_BYTES = 64 * 1024;

type CorkedSocket = Socket & { [CORKED]?: true; [WRITE_NOW]?: () => void };

function corkSocket(socket: Socket): void {
  const s = socket as CorkedSocket;
  if (s[CORKED]) return;
  s[CORKED] = true;
  const write = s.write;
  let corked = false;
  const uncork = () => {
    corked = false;
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
      s.cork();
      process.nextTick(uncork);
    }
    const ok = (write as (...a: unknown[]) => boolean).apply(this, args);
    // A burst (hundreds of requests' commands in one turn) leaves in writes of at most this much:
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
 * Writes at once what `client`'s corked sockets hold, instead of at the end of the turn: for a
 * command whose latency is the user's (a stream's first chunk), when the rest of the turn may run on
 * (the other events of the same upstream read).
 */
export function writeNow(client: Redis | Cluster): void {
  const nodes = client instanceof Redis ? [client] : client.nodes();
  for (const r of nodes) (r as unknown as { stream?: CorkedSocket }).stream?.[WRITE_NOW]?.();
}

/** Corks each socket of `client` per turn, on every (re)connect; a cluster's node connections alike. */
export function corkPerTurn(client: Redis | Cluster): void {
  const hook = (r: Redis) => {
    const apply = () => {
      const stream = (r as unknown as { stream?: Socket }).stream;
      if (stream && typeof stream.cork === 'function') corkSocket(stream);
    };
    r.on('connect', apply);
    apply();
  };
  if (client instanceof Redis) hook(client);
  else client.on('+node', (node: Redis) => hook(node));
}
