import crypto from 'crypto';

const SIG = '_sig_';
const MINTED = /^call_[0-9a-f]{18}$/;
/** A Gemini `functionCall.id` kept as the tool-call id: within the tool-id alphabet of every dialect. */
const KEEPABLE = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Tool-call ids for Gemini function calls. Gemini's own `functionCall.id`, when it sends one, is the
 * id (it goes back as the call's and its result's `id`); without one the id is fresh, `call_<18 hex>`.
 * When the call came with a thought signature (Gemini 3 returns one on the first function call of a
 * turn and refuses the next request without it), the signature rides in the id after `_sig_`
 * (base64url, so it stays within `[A-Za-z0-9_-]`) and goes back with the call on the next turn.
 */
export function callId(thoughtSignature?: unknown, upstreamId?: unknown): string {
  const keep = typeof upstreamId === 'string' && KEEPABLE.test(upstreamId) && !upstreamId.includes(SIG) && !MINTED.test(upstreamId);
  const id = keep ? upstreamId : `call_${crypto.randomBytes(9).toString('hex')}`;
  if (typeof thoughtSignature !== 'string' || !thoughtSignature) return id;
  return `${id}${SIG}${Buffer.from(thoughtSignature, 'base64').toString('base64url')}`;
}

/**
 * A tool-call id of these carrying a thought signature: longer than OpenAI's own call ids (a
 * signature is an encrypted blob of hundreds of characters), so the Responses API's 64-character
 * limit on an output's `call_id` (api/routes/responses/schema.ts) does not apply to it.
 */
export const SIGNED_CALL_ID = new RegExp(SIG);

/** Whether a tool-call id carries a thought signature (made by callId). */
export const hasSignature = (id: string): boolean => id.includes(SIG);

/**
 * A tool-call id as an upstream of another kind than Gemini gets it: without its `_sig_<signature>`
 * (the signature means nothing there, and hundreds of characters exceed every other vendor's limit on
 * tool-call ids: OpenAI chat 40, Responses `call_id` 64, Bedrock `toolUseId` 64). The head stays, a
 * gateway-minted `call_<18 hex>` or Gemini's own id, so a call and its result still pair; the id
 * itself when it carries none, or when nothing is before the marker (not one of these).
 */
export function withoutSignature(id: string): string {
  const at = id.indexOf(SIG);
  return at > 0 ? id.slice(0, at) : id;
}

/**
 * What a tool-call id carries back to Gemini: the call's own `id` (any id but one the gateway minted,
 * so Gemini's, or a caller's own) and the thought signature (standard base64, as the API sends it).
 */
export function parseCallId(id: string): { upstreamId?: string; signature?: string } {
  const at = id.indexOf(SIG);
  const head = at < 0 ? id : id.slice(0, at);
  const b = at < 0 ? '' : id.slice(at + SIG.length);
  const signature = b && /^[A-Za-z0-9_-]+$/.test(b) ? Buffer.from(b, 'base64url').toString('base64') : undefined;
  return { upstreamId: head && !MINTED.test(head) ? head : undefined, signature };
}
