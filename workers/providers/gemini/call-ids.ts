import crypto from 'crypto';

const SIG = '_sig_';

/**
 * Tool-call ids for Gemini function calls, which carry none the callers can rely on. The id is
 * fresh per call; when the call came with a thought signature (Gemini 3 returns one on the first
 * function call of a turn and refuses the next request without it), the signature rides in the id
 * (base64url, so it stays within `[A-Za-z0-9_-]`) and goes back with the call on the next turn.
 */
export function callId(thoughtSignature?: unknown): string {
  const id = `call_${crypto.randomBytes(9).toString('hex')}`;
  if (typeof thoughtSignature !== 'string' || !thoughtSignature) return id;
  return `${id}${SIG}${Buffer.from(thoughtSignature, 'base64').toString('base64url')}`;
}

/** The thought signature a call id carries (standard base64, as the API sends it), if any. */
export function signatureOf(id: string): string | undefined {
  const at = id.indexOf(SIG);
  if (!id.startsWith('call_') || at < 0) return undefined;
  const b = id.slice(at + SIG.length);
  return /^[A-Za-z0-9_-]+$/.test(b) ? Buffer.from(b, 'base64url').toString('base64') : undefined;
}
