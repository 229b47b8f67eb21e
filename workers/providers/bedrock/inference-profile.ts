import { BedrockClient, GetInferenceProfileCommand } from '@aws-sdk/client-bedrock';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { ApiError } from '../../../shared/errors/ApiError';
import { parseCredential, regionOf, sdkOptions, type BedrockAccess } from './api';

/**
 * Which foundation model a Bedrock application inference profile serves, asked of AWS's control
 * plane (`GetInferenceProfile`: `GET /inference-profiles/{inferenceProfileIdentifier}` on
 * `bedrock.{region}.amazonaws.com`) through AWS's own client, `@aws-sdk/client-bedrock`, made with the
 * runtime client's options (api.ts sdkOptions: the provider's region and own secret). The catalog
 * asks it when a deployment names such a profile without `base_model` (shared/catalog/base-models.ts).
 */

/** An application inference profile's ARN: Converse takes it as `modelId`, but it does not name the model. */
const APPLICATION_PROFILE = /^arn:aws[a-z-]*:bedrock:[a-z0-9-]+:\d{12}:application-inference-profile\/[A-Za-z0-9.:-]+$/;
/** A foundation model's ARN (`arn:aws:bedrock:{region}::foundation-model/{modelId}`) and its model id. */
const FOUNDATION_MODEL = /^arn:aws[a-z-]*:bedrock:[a-z0-9-]*::foundation-model\/(.+)$/;

export const isApplicationProfile = (upstream: string): boolean => APPLICATION_PROFILE.test(upstream);

/**
 * The control plane's endpoint: a `base_url` that is not an AWS host (a proxy, the simulator, a test's
 * server) is asked as the runtime is; otherwise the region's `https://bedrock.{region}.amazonaws.com`
 * (a runtime `base_url` on AWS, such as a VPC endpoint of bedrock-runtime, does not serve the control plane).
 */
export function controlEndpointOf(call: BedrockAccess): string {
  const base = call.baseUrl?.replace(/\/+$/, '');
  if (base && !/\.amazonaws\.com(\.cn)?$/i.test(new URL(base).hostname)) return base;
  return `https://bedrock.${regionOf(call)}.amazonaws.com`;
}

/** The profile's foundation model id, or why there is none to take (the credential never in it). */
export type ProfileModel = { model: string } | { unresolved: string };

type SdkError = Error & { $metadata?: { httpStatusCode?: number } };

/** A management write waits for this answer: short limits, and no keep-alive (one call now and then). */
const CONNECT_MS = 5_000;
const ANSWER_MS = 10_000;

export async function profileModel(call: BedrockAccess, arn: string): Promise<ProfileModel> {
  let client: BedrockClient | undefined;
  try {
    client = new BedrockClient({
      ...sdkOptions(call),
      endpoint: controlEndpointOf(call),
      requestHandler: new NodeHttpHandler({ connectionTimeout: CONNECT_MS, requestTimeout: ANSWER_MS }),
    });
    const res = await client.send(new GetInferenceProfileCommand({ inferenceProfileIdentifier: arn }), { abortSignal: AbortSignal.timeout(CONNECT_MS + ANSWER_MS) });
    // a cross-region profile lists its model once per region it routes to: the same model id
    const arns = (res.models ?? []).map((m) => m.modelArn ?? '');
    const ids = [...new Set(arns.map((a) => FOUNDATION_MODEL.exec(a)?.[1] ?? a))];
    if (ids.length === 1 && FOUNDATION_MODEL.test(arns[0])) return { model: ids[0] };
    if (!ids.length) return { unresolved: 'AWS lists no model for the profile' };
    if (ids.length > 1) return { unresolved: `the profile serves different models (${ids.join(', ')}), so none is taken` };
    return { unresolved: `the profile serves ${ids[0]}, which is not a foundation model's ARN` };
  } catch (err) {
    return { unresolved: withoutSecret(reasonOf(err as SdkError), call.apiKey) };
  } finally {
    client?.destroy();
  }
}

function reasonOf(e: SdkError): string {
  if (e instanceof ApiError) return e.message; // no region, no credential or an unreadable one (api.ts)
  const said = `${e.name}: ${String(e.message ?? '')}`.slice(0, 400);
  if (e.name === 'AccessDeniedException') return `AWS refused GetInferenceProfile (${said}); the provider's credential needs the bedrock:GetInferenceProfile permission`;
  if (e.name === 'ResourceNotFoundException') return `AWS has no such inference profile (${said})`;
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return `AWS did not answer GetInferenceProfile in time (${said})`;
  const status = e.$metadata?.httpStatusCode;
  return `GetInferenceProfile failed${status ? ` (HTTP ${status})` : ''}: ${said}`;
}

/** The text with every piece of the provider's secret taken out (an answer or an error that echoed it). */
function withoutSecret(text: string, secret: string | undefined): string {
  if (!secret) return text;
  let pieces = [secret.trim()];
  try {
    const c = parseCredential(secret);
    pieces = pieces.concat(c.kind === 'bearer' ? [c.token] : [c.accessKeyId, c.secretAccessKey, c.sessionToken ?? '']);
  } catch {
    // unreadable: the whole secret is the one piece
  }
  return pieces.filter((p) => p.length >= 4).reduce((t, p) => t.split(p).join('[credential]'), text);
}
