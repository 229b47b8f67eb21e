import crypto from 'crypto';
import { config } from '../../shared/config/env';
import type { UpstreamCall } from './types';

/** Fingerprints made so far, by backend (a few per deployment): one HMAC per backend, not per request. */
const made = new Map<string, string>();
const MADE_MAX = 1000;

/**
 * OpenAI's `system_fingerprint` for an answer translated from an upstream that has none (Anthropic,
 * Gemini, Bedrock): its API document types it a string on the chat completion and on every chunk
 * ("the backend configuration that the model runs with ... to understand when backend changes have
 * been made that might impact determinism"), and OpenAI's answers carry it. Here it names the
 * deployment that served: the provider kind, its endpoint and region, the upstream model (and a
 * Bedrock profile's base model), as `fp_` and 10 hex digits of an HMAC under the gateway's secret,
 * so that it changes when they change and shows none of them (upstream model names are never shown).
 */
export function backendFingerprint(kind: string, call: UpstreamCall): string {
  const backend = JSON.stringify([kind, call.baseUrl, call.settings?.region ?? null, call.upstreamModel, call.baseModel ?? null]);
  let fp = made.get(backend);
  if (fp) return fp;
  fp = `fp_${crypto.createHmac('sha256', `fp:${config().secretKey}`).update(backend).digest('hex').slice(0, 10)}`;
  if (made.size >= MADE_MAX) made.clear();
  made.set(backend, fp);
  return fp;
}
