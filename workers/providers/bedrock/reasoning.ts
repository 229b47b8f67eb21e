import type { ContentBlock } from '@aws-sdk/client-bedrock-runtime';
import { CANONICAL_THINKING, refuseMalformedThinking, type ThinkingBlock } from '../anthropic/thinking';
import { EFFORT } from '../anthropic/to-messages';
import { isRecord } from '../../../shared/is-record';
import { anthropicApi } from '../anthropic/api';
import { given, unsupported } from '../unsupported';

/**
 * Reasoning on Bedrock Converse (test/fixtures/vendor/bedrock/reasoning-wire-format.md): a Claude
 * model's signed reasoning (`reasoningContent.reasoningText {text, signature}`) and redacted reasoning
 * (`reasoningContent.redactedContent`, bytes) are the canonical `thinking_blocks` (Anthropic's thinking
 * and redacted_thinking blocks, the redacted bytes as base64 `data`), sent back before the turn's text
 * and tool use; `reasoning_effort` is Claude's thinking (adaptive with `output_config.effort` from
 * Claude 4.6 on, a `budget_tokens` before, with Opus 4.5's beta effort) or Amazon Nova 2's
 * `reasoningConfig`, and refused on the other families; the messages dialect's own `thinking` goes to
 * a Claude model as it is.
 */

/** A Claude model on Bedrock (a foundation model id, an inference profile or an ARN naming one). */
export function isClaude(upstream: string): boolean {
  return /anthropic\.claude/.test(upstream);
}

/**
 * A Claude model whose thinking takes the adaptive form (`thinking: {type: "adaptive"}` with
 * `output_config.effort`; test/fixtures/vendor/bedrock/adaptive-thinking.md): Claude 4.6 and later
 * (`anthropic.claude-opus-4-6-v1`, `anthropic.claude-sonnet-4-6`, `anthropic.claude-opus-4-7`, the
 * 5 generation) and Claude Mythos Preview. AWS: Opus 4.7 and later take adaptive thinking only
 * (`enabled` is a 400), on 4.6 `enabled` is deprecated, and older models (Sonnet 4.5, Opus 4.5, …)
 * take `enabled` with `budget_tokens` only (Opus 4.5 also `output_config.effort`, with a beta flag:
 * effortFields). `upstream` here is the id that names the model: a deployment's `base_model` when
 * it has one (an application inference profile's ARN names none, and is no Claude without it).
 */
export function adaptiveThinking(upstream: string): boolean {
  return claudeAtLeast(upstream, 6);
}

/** A Claude model that takes adaptive thinking only (`enabled` is a 400 there): Opus 4.7 and later, the 5 generation, Mythos Preview. */
export function adaptiveOnly(upstream: string): boolean {
  return claudeAtLeast(upstream, 7);
}

/** The Claude model the id names (`anthropic.claude-opus-4-5-20251101-v1:0`: opus 4.5), when it names one with a version. */
function claudeVersion(upstream: string): { name: string; major: number; minor: number } | undefined {
  const v = /anthropic\.claude-([a-z]+)-(\d+)(?:-(\d{1,2}))?(?!\d)/.exec(upstream);
  return v ? { name: v[1], major: Number(v[2]), minor: Number(v[3] ?? 0) } : undefined;
}

/** Whether the id names Claude Mythos Preview, a Claude 5 or later, or a Claude 4.`minor` or later (an id without a version: no). */
function claudeAtLeast(upstream: string, minor: number): boolean {
  if (/anthropic\.claude-mythos-preview/.test(upstream)) return true;
  const v = claudeVersion(upstream);
  return !!v && (v.major > 4 || (v.major === 4 && v.minor >= minor));
}

/**
 * Claude Opus 4.5, which takes `output_config.effort` (low, medium, high) with the beta flag
 * `effort-2025-11-24` in `anthropic_beta` beside its `enabled` thinking
 * (test/fixtures/vendor/bedrock/adaptive-thinking.md: AWS's "Claude Opus 4.5 now in Amazon Bedrock").
 */
function isOpus45(upstream: string): boolean {
  const v = claudeVersion(upstream);
  return v?.name === 'opus' && v.major === 4 && v.minor === 5;
}

/** An Amazon Nova 2 model (`amazon.nova-2-lite-v1:0`, `us.amazon.nova-2-…`): its reasoning is `reasoningConfig`. */
export function isNova2(upstream: string): boolean {
  return /amazon\.nova-2-/.test(upstream);
}

/** Claude's thinking budget (`budget_tokens`) for each effort level: 1024 at least (AWS's minimum). */
const CLAUDE_BUDGET: Record<string, number> = { minimal: 1024, low: 1024, medium: 8192, high: 16384, xhigh: 32000, max: 32000 };
const MIN_BUDGET = 1024;

/** Opus 4.5's `output_config.effort` for each effort level: AWS documents low, medium and high (its default, and its highest). */
const OPUS45_EFFORT: Record<string, 'low' | 'medium' | 'high'> = { minimal: 'low', low: 'low', medium: 'medium', high: 'high', xhigh: 'high', max: 'high' };
const EFFORT_BETA = 'effort-2025-11-24';

/** Nova 2's `maxReasoningEffort` for each effort level (AWS documents low, medium and high). */
const NOVA_EFFORT: Record<string, 'low' | 'medium' | 'high'> = { minimal: 'low', low: 'low', medium: 'medium', high: 'high' };

/**
 * The canonical fields Nova 2 refuses beside `maxReasoningEffort: "high"` (test/fixtures/vendor/bedrock/reasoning-wire-format.md):
 * AWS's Nova 2 guide, "Temperature, topP and topK cannot be used with maxReasoningEffort set to high"
 * (`top_k` is refused on every model but Claude already), and `maxTokens` must be unset there.
 */
const NOVA_HIGH_REFUSES = ['temperature', 'top_p', 'max_tokens', 'max_completion_tokens'] as const;

const maxField = (body: Record<string, unknown>) => (typeof body.max_completion_tokens === 'number' ? 'max_completion_tokens' : 'max_tokens');
const maxOf = (body: Record<string, unknown>) => (body.max_completion_tokens ?? body.max_tokens) as number | undefined;

/** A level `levels` has no form for: 400 naming `reasoning_effort`. */
function level<T>(levels: Record<string, T>, effort: unknown): T {
  if (typeof effort === 'string' && Object.hasOwn(levels, effort)) return levels[effort];
  throw unsupported('reasoning_effort', `'${String(effort)}' is not supported on this model (it takes ${Object.keys(levels).join(', ')} or none).`);
}

/** The messages dialect's `thinking` on the canonical request (CANONICAL_THINKING), when the caller sent one. */
const callerThinking = (body: Record<string, unknown>) => (isRecord(body[CANONICAL_THINKING]) ? (body[CANONICAL_THINKING] as Record<string, unknown>) : undefined);

/** A `reasoning_effort` that asks for reasoning (given, not `none`). */
const effortOf = (body: Record<string, unknown>) => (given(body.reasoning_effort) && body.reasoning_effort !== 'none' ? body.reasoning_effort : undefined);

/**
 * Whether the request turns Claude's thinking on: the caller's own `thinking` of a type other than
 * `disabled` (it wins over the effort), else a `reasoning_effort` other than `none`, on a Claude model.
 */
function thinks(body: Record<string, unknown>, upstream: string): boolean {
  if (!isClaude(upstream)) return false;
  const own = callerThinking(body);
  return own ? own.type !== 'disabled' : effortOf(body) !== undefined;
}

/**
 * What Bedrock would refuse in the request's reasoning (400 `unsupported_parameter` naming the field):
 * malformed `thinking_blocks`; a `reasoning_effort` on a family without a Converse form for it, or at a
 * level without one; on Nova 2 at `high`, a temperature, `top_p` or maximum (NOVA_HIGH_REFUSES); with
 * Claude's thinking on (the effort's or the caller's `thinking`), what Anthropic documents as
 * incompatible with it (a temperature other than 1, `top_k`, a `top_p` below
 * 0.95, a forced tool choice) and, for an effort's budget, a maximum that leaves no room for the
 * minimum budget.
 */
export function refuseReasoning(body: Record<string, unknown>, upstream: string): void {
  refuseMalformedThinking(body);
  const effort = body.reasoning_effort;
  if (given(effort)) {
    if (!isClaude(upstream) && !isNova2(upstream)) throw unsupported('reasoning_effort', 'has no Converse form for this model (on Bedrock, Claude and Amazon Nova 2 models take it).');
    if (effort !== 'none') level<unknown>(isNova2(upstream) ? NOVA_EFFORT : adaptiveThinking(upstream) ? EFFORT : CLAUDE_BUDGET, effort);
  }
  if (isNova2(upstream) && effortOf(body) === 'high') {
    const set = NOVA_HIGH_REFUSES.find((k) => given(body[k]));
    if (set) throw unsupported(set, `cannot be set with reasoning_effort 'high' on Amazon Nova 2 (Bedrock refuses it beside maxReasoningEffort "high"; a lower effort takes it).`);
  }
  if (!thinks(body, upstream)) return;
  const why = "is not compatible with Claude's thinking on this model.";
  if (given(body.temperature) && body.temperature !== 1) throw unsupported('temperature', `other than 1 ${why}`);
  if (given(body.top_k)) throw unsupported('top_k', why);
  if (typeof body.top_p === 'number' && body.top_p < 0.95) throw unsupported('top_p', `below 0.95 ${why}`);
  const choice = body.tool_choice as { type?: unknown } | string | undefined;
  if (choice === 'required' || (typeof choice === 'object' && choice?.type === 'function')) throw unsupported('tool_choice', `forcing a tool call ${why}`);
  if (callerThinking(body) || adaptiveThinking(upstream)) return;
  const max = maxOf(body);
  if (typeof max === 'number' && max <= MIN_BUDGET) throw unsupported(maxField(body), `must be above ${MIN_BUDGET} with reasoning_effort on this model (Claude's thinking budget is ${MIN_BUDGET} tokens at least, and below the maximum).`);
}

/**
 * The request's reasoning as Converse takes it (checked by refuseReasoning), as
 * `additionalModelRequestFields`, and `maxTokens` to send:
 * - the caller's own `thinking` (the messages dialect's) on a Claude model, as it is, with the effort
 *   as `output_config.effort` on a model that takes it (effortFields; an explicit `thinking` wins
 *   over the effort's budget); an `enabled` one without a caller's maximum gets its budget and the
 *   Anthropic adapter's default answer allowance;
 * - else the effort: on a Claude model of the adaptive form (adaptiveThinking) `thinking: {type:
 *   "adaptive"}` and `output_config.effort` (Anthropic's levels, EFFORT); on an older Claude model
 *   `thinking` with the level's `budget_tokens`, within the caller's maximum (which then covers
 *   thinking and answer, as OpenAI's does; without one the maximum is the budget and the default
 *   answer allowance), and on Opus 4.5 its `output_config.effort` beside it; Nova 2's
 *   `reasoningConfig`.
 */
export function reasoningRequest(body: Record<string, unknown>, upstream: string): { fields?: Record<string, unknown>; maxTokens?: number } {
  const effort = effortOf(body);
  // at the top of additionalModelRequestFields, as every Converse example of AWS's Nova 2 guide has it (reasoning-wire-format.md)
  if (isNova2(upstream)) return effort ? { fields: { reasoningConfig: { type: 'enabled', maxReasoningEffort: level(NOVA_EFFORT, effort) } } } : {};
  if (!isClaude(upstream)) return {};
  const adaptive = adaptiveThinking(upstream);
  const withEffort = effort ? effortFields(upstream, effort) : {};
  const own = callerThinking(body);
  const max = maxOf(body);
  if (own) {
    const budget = own.type === 'enabled' && typeof own.budget_tokens === 'number' && typeof max !== 'number' ? own.budget_tokens + anthropicApi.defaultMaxTokens : undefined;
    return { fields: { thinking: own, ...withEffort }, maxTokens: budget };
  }
  if (!effort) return {};
  if (adaptive) return { fields: { thinking: { type: 'adaptive' }, ...withEffort } };
  const budget = Math.min(level(CLAUDE_BUDGET, effort), typeof max === 'number' ? max - 1 : Infinity);
  return { fields: { thinking: { type: 'enabled', budget_tokens: budget }, ...withEffort }, maxTokens: typeof max === 'number' ? max : budget + anthropicApi.defaultMaxTokens };
}

/**
 * `output_config.effort` on a Claude model that takes it: Claude 4.6 and later (Anthropic's levels,
 * EFFORT; no beta flag), Opus 4.5 (OPUS45_EFFORT, with `anthropic_beta: ["effort-2025-11-24"]`, as
 * AWS sends it); nothing on older models.
 */
function effortFields(upstream: string, effort: unknown): Record<string, unknown> {
  if (adaptiveThinking(upstream)) return { output_config: { effort: level(EFFORT, effort) } };
  if (isOpus45(upstream)) return { output_config: { effort: level(OPUS45_EFFORT, effort) }, anthropic_beta: [EFFORT_BETA] };
  return {};
}

/** An assistant message's `thinking_blocks` as Converse reasoning blocks, for a Claude model only (the signatures are Anthropic's). */
export function reasoningBlocks(blocks: ThinkingBlock[] | undefined, claude: boolean): ContentBlock[] {
  if (!claude || !blocks) return [];
  return blocks.map((b) =>
    b.type === 'thinking' ? { reasoningContent: { reasoningText: { text: b.thinking, signature: b.signature } } } : { reasoningContent: { redactedContent: Buffer.from(b.data, 'base64') } },
  );
}

/** Redacted reasoning bytes as a redacted_thinking block (its `data` base64, as Anthropic's API gives it). */
export const redacted = (bytes: Uint8Array): ThinkingBlock => ({ type: 'redacted_thinking', data: Buffer.from(bytes).toString('base64') });

/** The signed and redacted reasoning of a Converse answer's blocks, in order (unsigned reasoning text is `reasoning_content` only). */
export function thinkingBlocksOf(blocks: ContentBlock[]): ThinkingBlock[] {
  const out: ThinkingBlock[] = [];
  for (const b of blocks) {
    const r = b.reasoningContent;
    if (r?.reasoningText?.signature) out.push({ type: 'thinking', thinking: r.reasoningText.text ?? '', signature: r.reasoningText.signature });
    else if (r?.redactedContent?.length) out.push(redacted(r.redactedContent));
  }
  return out;
}
