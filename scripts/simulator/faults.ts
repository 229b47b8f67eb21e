import type { Response } from 'express';
import type { TakenKnobs } from './knobs';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The body of a `status` knob's answer: OpenAI's error shape unless a route answers in its API's own. */
export type FaultBody = (status: number, message: string) => unknown;

const openaiFaultBody: FaultBody = (_status, message) => ({ error: { message, type: 'simulated', code: null } });

/**
 * Applies the knobs that come before any answer. Returns true when the response was handled
 * (status, malformed or hang); a `hold` waits here for the test's release and the route should stop.
 */
export async function applyFaults(k: TakenKnobs, res: Response, faultBody: FaultBody = openaiFaultBody): Promise<boolean> {
  if (k.delayMs) await sleep(k.delayJitter ? k.delayMs * (1 - k.delayJitter + 2 * k.delayJitter * Math.random()) : k.delayMs);
  if (k.released) await k.released;
  if (k.hang) return true; // never answer; the client's abort closes the socket
  if (k.status && k.status >= 400) {
    if (k.retryAfter !== undefined) res.setHeader('Retry-After', String(k.retryAfter));
    res.status(k.status).json(faultBody(k.status, `simulated status ${k.status}`));
    return true;
  }
  if (k.malformed) {
    res.status(200).type('application/json').send('{"this is": not json');
    return true;
  }
  return false;
}
