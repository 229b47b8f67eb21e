/** What Azure OpenAI's API versions take (docs/providers/azure.md). */

/**
 * Azure's dated API versions before 2024-09-01 refuse `max_completion_tokens` ("Unrecognized request
 * argument supplied"); they know only `max_tokens`. Later dated versions, `v1` and `preview` take it
 * (and reasoning deployments take nothing else).
 */
export const FIRST_WITH_MAX_COMPLETION_TOKENS = '2024-09-01';

/** A dated API version's date (`2024-06-01` of `2024-06-01` or `2024-08-01-preview`); undefined for `v1`, `preview`. */
export const dateOf = (version: string | undefined) => (version && /^\d{4}-\d{2}-\d{2}/.test(version) ? version.slice(0, 10) : undefined);

/**
 * Whether a dated API version takes `stream_options`: GA `2024-10-21` and the versions from
 * `2024-09-01-preview` on (Azure's inference specs); GA `2024-06-01` and older refuse it with 400
 * "Unrecognized request argument supplied: stream_options" (openai/openai-python#1469,
 * Azure/azure-rest-api-specs#29157). `v1` and `preview` take it. A version without it streams without
 * the field and is billed by the gateway's estimate (docs/providers.md), as any upstream that reports no usage.
 */
export function takesStreamOptions(version: string | undefined): boolean {
  const dated = dateOf(version);
  return !dated || dated >= FIRST_WITH_MAX_COMPLETION_TOKENS;
}
