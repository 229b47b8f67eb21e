/**
 * Keeps this process's event loop `ms` behind every 5 ms, as a flood keeps a web pod or a worker
 * behind; returns what stops it (idempotent).
 */
export function lagLoop(ms: number): () => void {
  const busy = setInterval(() => {
    const until = Date.now() + ms;
    while (Date.now() < until) { /* the loop is busy */ }
  }, 5);
  return () => clearInterval(busy);
}
