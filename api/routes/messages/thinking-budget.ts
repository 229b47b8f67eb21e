import { ApiError } from '../../../shared/errors/ApiError';
import { isRecord } from '../../../shared/is-record';

/** The beta under which Anthropic lets a thinking budget exceed `max_tokens` (Claude Code sends it). */
export const INTERLEAVED_THINKING = 'interleaved-thinking-2025-05-14';

/** Anthropic's words for the refusal (its 400 `invalid_request_error`, as clients quote it: CLIProxyAPI issue 413, aichat issue 1304). */
const BUDGET_NOT_BELOW_MAX =
  '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size';

/**
 * Manual extended thinking (`thinking: {type: "enabled", budget_tokens}`) with a budget at or above
 * `max_tokens` is refused as Anthropic refuses it (SDK 1.16 ThinkingConfigEnabled: "Must be ≥1024
 * and less than `max_tokens`"), 400 `invalid_request` with type `invalid_request_error`, on every
 * upstream, before any lane is taken or anything billed: a translated upstream was sent the request
 * and answered it. With the interleaved-thinking beta in `anthropic-beta` (`beta`: the normalised
 * header, beta.ts) the budget may exceed `max_tokens`: "With interleaved thinking, the
 * `budget_tokens` can exceed the `max_tokens` parameter, as it represents the total budget across
 * all thinking blocks within one assistant turn" (Anthropic's extended-thinking document). The
 * minimum of 1,024 is the schema's (schema.ts `thinking`).
 */
export function refuseThinkingBudget(body: { max_tokens?: number; thinking?: unknown }, beta: string | undefined): void {
  const t = body.thinking;
  if (!isRecord(t) || t.type !== 'enabled' || typeof t.budget_tokens !== 'number' || typeof body.max_tokens !== 'number') return;
  if (t.budget_tokens < body.max_tokens) return;
  if (beta?.split(',').includes(INTERLEAVED_THINKING)) return;
  throw new ApiError(400, 'invalid_request', BUDGET_NOT_BELOW_MAX, { param: 'thinking.budget_tokens' });
}
