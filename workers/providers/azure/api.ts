import type { OpenAiEndpoint } from '../openai/api';
import { errors } from '../../../shared/errors/codes';
import type { ErrorHints } from '../http';
import { takesStreamOptions } from './api-versions';

/** The resource endpoint without trailing slashes or a trailing `/openai` (both forms are pasted by operators). */
function resourceRoot(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/openai$/, '');
}

/**
 * Where and how to call Azure OpenAI (docs/providers/azure.md). `base_url` is the resource endpoint,
 * the key goes in `api-key`. A dated `api_version` (e.g. `2024-10-21`) calls the deployment named by
 * the model's upstream: `{base}/openai/deployments/{upstream}{path}?api-version=...`; `v1` calls the
 * version-less v1 API, `{base}/openai/v1{path}`, with the deployment name as the body's `model`
 * (`preview` is the same with `?api-version=preview`). The bodies are OpenAI's.
 */
export const azureEndpoint: OpenAiEndpoint = {
  url(call, path) {
    const version = call.settings?.api_version;
    if (!version) throw errors.upstreamError('This Azure OpenAI provider has no api_version; set one in its settings.');
    const root = resourceRoot(call.baseUrl);
    if (version === 'v1') return `${root}/openai/v1${path}`;
    if (version === 'preview') return `${root}/openai/v1${path}?api-version=preview`;
    return `${root}/openai/deployments/${encodeURIComponent(call.upstreamModel)}${path}?api-version=${encodeURIComponent(version)}`;
  },
  headers(call, upload) {
    const h: Record<string, string> = upload ? { accept: 'application/json' } : { 'content-type': 'application/json', accept: 'application/json' };
    if (call.apiKey) h['api-key'] = call.apiKey;
    return h;
  },
  errorHints: azureErrorHints,
  streamOptions: (call) => takesStreamOptions(call.settings?.api_version),
};

/**
 * What Azure's error body says beyond its message. A 404 `DeploymentNotFound` is a deployment name the
 * operator configured that the resource does not have. A 400 `content_filter` (its `innererror.code`
 * `ResponsibleAIPolicyViolation`, with `content_filter_result` per category) is Azure's content filter
 * refusing the prompt: its `innererror` goes to the caller as Azure wrote it (bounded in size).
 */
export function azureErrorHints(_status: number, body: unknown): ErrorHints {
  const e = (body as { error?: { code?: unknown; innererror?: { code?: unknown } } } | null)?.error;
  if (!e || typeof e !== 'object') return {};
  if (e.code === 'DeploymentNotFound') return { misconfigured: true };
  if (e.code === 'content_filter' || e.innererror?.code === 'ResponsibleAIPolicyViolation') {
    const inner = e.innererror && typeof e.innererror === 'object' && JSON.stringify(e.innererror).length <= 8_192 ? e.innererror : undefined;
    return { contentFilter: { detail: inner ? { innererror: inner } : undefined } };
  }
  return {};
}
