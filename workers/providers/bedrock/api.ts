import https from 'https';
import http from 'http';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { UpstreamCall } from '../types';
import { ApiError } from '../../../shared/errors/ApiError';

/**
 * Where and how to call the Bedrock Runtime Converse API. The client is AWS's own SDK, so the
 * request bodies, paths, SigV4 signing and the event-stream decoding are AWS's serialisers.
 * `base_url` is optional: without it the region's endpoint `https://bedrock-runtime.{region}.amazonaws.com`.
 */

/** The one secret of a bedrock provider: an access key pair (JSON) or a Bedrock API key (anything else). */
export type BedrockCredential =
  | { kind: 'sigv4'; accessKeyId: string; secretAccessKey: string; sessionToken?: string }
  | { kind: 'bearer'; token: string };

export function parseCredential(secret: string | undefined): BedrockCredential {
  if (!secret) throw new ApiError(502, 'upstream_auth_failed', 'The bedrock provider has no credential configured.');
  const s = secret.trim();
  if (s.startsWith('{')) {
    let j: { access_key_id?: unknown; secret_access_key?: unknown; session_token?: unknown };
    try {
      j = JSON.parse(s) as typeof j;
    } catch {
      throw new ApiError(502, 'upstream_auth_failed', 'The bedrock credential is not valid JSON (expected {"access_key_id","secret_access_key","session_token"?}).');
    }
    if (typeof j.access_key_id !== 'string' || typeof j.secret_access_key !== 'string' || !j.access_key_id || !j.secret_access_key) {
      throw new ApiError(502, 'upstream_auth_failed', 'The bedrock credential needs access_key_id and secret_access_key.');
    }
    return { kind: 'sigv4', accessKeyId: j.access_key_id, secretAccessKey: j.secret_access_key, ...(typeof j.session_token === 'string' && j.session_token ? { sessionToken: j.session_token } : {}) };
  }
  return { kind: 'bearer', token: s };
}

/** What a Bedrock client of a provider is made of: its settings (region), base URL and secret. */
export type BedrockAccess = Pick<UpstreamCall, 'baseUrl' | 'settings' | 'apiKey'>;

export function regionOf(call: Pick<BedrockAccess, 'settings'>): string {
  const region = call.settings?.region;
  if (!region) throw new ApiError(502, 'upstream_unsupported', 'The bedrock provider has no region setting.');
  return region;
}

export function endpointOf(call: BedrockAccess): string {
  return call.baseUrl ? call.baseUrl.replace(/\/+$/, '') : `https://bedrock-runtime.${regionOf(call)}.amazonaws.com`;
}

/** HTTP/1.1 keep-alive (the SDK's default handler is HTTP/2, which Converse does not need). */
const handler = new NodeHttpHandler({
  httpAgent: new http.Agent({ keepAlive: true }),
  httpsAgent: new https.Agent({ keepAlive: true }),
  connectionTimeout: 10_000,
  requestTimeout: 0, // the job's deadline, through its AbortSignal, is the one limit
});

const clients = new Map<string, BedrockRuntimeClient>();
const MAX_CLIENTS = 64;

/**
 * The options every Bedrock SDK client of a provider is made with (the runtime's here, the control
 * plane's in inference-profile.ts): its region and its own secret, as SigV4 keys or a bearer token.
 * Nothing is read from the process's AWS environment (profiles, env keys), and the SDK does not retry.
 */
export function sdkOptions(call: BedrockAccess) {
  const region = regionOf(call);
  const cred = parseCredential(call.apiKey);
  return {
    region,
    maxAttempts: 1,
    ...(cred.kind === 'sigv4'
      ? { credentials: { accessKeyId: cred.accessKeyId, secretAccessKey: cred.secretAccessKey, sessionToken: cred.sessionToken }, authSchemePreference: ['sigv4'] }
      : { token: { token: cred.token }, authSchemePreference: ['httpBearerAuth'] }),
  };
}

/**
 * One client per endpoint, region and credential, reused across calls. No SDK retries: the model
 * pool's router retries (workers/routing), across deployments and with cooldowns.
 */
export function clientFor(call: UpstreamCall): BedrockRuntimeClient {
  const endpoint = endpointOf(call);
  const options = sdkOptions(call);
  const key = JSON.stringify([endpoint, options]);
  let c = clients.get(key);
  if (c) return c;
  c = new BedrockRuntimeClient({ ...options, endpoint, requestHandler: handler });
  if (clients.size >= MAX_CLIENTS) {
    // not destroyed: the handler (and its sockets) is shared by every client
    clients.delete(clients.keys().next().value as string);
  }
  clients.set(key, c);
  return c;
}
