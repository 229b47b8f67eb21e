import type { Response } from 'express';
import type { TakenKnobs } from './knobs';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Applies the knobs that come before any answer. Returns true when the response was handled
 * (status, malformed or hang); a `hold` waits here for the test's release and the route should stop.
 */
export async function applyFaults(k: TakenKnobs, res: Response): Promise<boolean> {
  if (k.delayMs) await sleep(k.delayJitter ? k.delayMs * (1 - k.delayJitter + 2 * k.delayJitter * Math.random()) : k.delayMs);
  if (k.released) await k.released;
  if (k.hang) return true; // never answer; the client's abort closes the socket
  if (k.status && k.status >= 400) {
    if (k.retryAfter !== undefined) res.setHeader('Retry-After', String(k.retryAfter));
    res.status(k.status).json({ error: { message: `simulated status ${k.status}`, type: 'simulated', code: null } });
    return true;
  }
  if (k.malformed) {
    res.status(200).type('application/json').send('{"this is": not json');
    return true;
  }
  return false;
}
