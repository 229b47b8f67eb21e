import { ApiError } from '../../../shared/errors/ApiError';
import { countTokensAtMost } from '../../../shared/tokenizer/pool';
import { canonicalText, type CanonicalMessage, type CanonicalRequest, type CanonicalToolCall } from '../canonical';
import { countCanonicalTokens } from '../responses/count-tokens';

/** Anthropic's `clear_tool_uses_20250919` context edit (beta `context-management-2025-06-27`). */
export interface ClearToolUsesEdit {
  type: 'clear_tool_uses_20250919';
  trigger?: { type: 'input_tokens' | 'tool_uses'; value: number } | null;
  keep?: { type: 'tool_uses'; value: number } | null;
  clear_at_least?: { type: 'input_tokens'; value: number } | null;
  exclude_tools?: string[] | null;
  clear_tool_inputs?: boolean | string[] | null;
}

/** What an applied edit reports (BetaClearToolUses20250919EditResponse). */
export interface AppliedEdit {
  type: 'clear_tool_uses_20250919';
  cleared_tool_uses: number;
  cleared_input_tokens: number;
}

/** The text a cleared tool result is replaced with, so the model knows it was there. */
export const CLEARED_RESULT = '[This tool result was cleared to save context.]';
/** Anthropic's defaults: triggered above 100,000 input tokens, keeping the last 3 tool uses. */
const DEFAULT_TRIGGER = { type: 'input_tokens' as const, value: 100_000 };
const DEFAULT_KEEP = 3;

const invalid = (message: string) => new ApiError(400, 'invalid_request', message, { param: 'context_management' });

function count(v: unknown, what: string, types: string[]): void {
  if (v === undefined || v === null) return;
  const o = v as { type?: unknown; value?: unknown };
  if (typeof o !== 'object' || !types.includes(String(o.type)) || !Number.isInteger(o.value) || (o.value as number) < 0) {
    throw invalid(`context_management: '${what}' must be {type: ${types.map((t) => `'${t}'`).join(' | ')}, value: a whole number}.`);
  }
}

/**
 * The request's `context_management.edits` the gateway applies on a translated upstream: the
 * `clear_tool_uses_20250919` ones (checked here: 400 when malformed). `clear_thinking_20251015` has
 * nothing to do there (thinking blocks never reach such an upstream) and `compact_20260112` is
 * compaction.ts's; any other type is 400. Undefined without the field.
 */
export function contextEditsOf(body: object): ClearToolUsesEdit[] | undefined {
  const cm = (body as { context_management?: unknown }).context_management as { edits?: unknown } | null | undefined;
  if (cm === undefined || cm === null) return undefined;
  const edits = cm.edits ?? [];
  if (!Array.isArray(edits)) throw invalid("context_management: 'edits' must be an array.");
  const out: ClearToolUsesEdit[] = [];
  for (const e of edits as Array<Record<string, unknown>>) {
    const type = e?.type;
    if (type === 'clear_thinking_20251015' || type === 'compact_20260112') continue;
    if (type !== 'clear_tool_uses_20250919') throw invalid(`context_management: unknown edit type ${JSON.stringify(type)}.`);
    count(e.trigger, 'trigger', ['input_tokens', 'tool_uses']);
    count(e.keep, 'keep', ['tool_uses']);
    count(e.clear_at_least, 'clear_at_least', ['input_tokens']);
    const ex = e.exclude_tools;
    if (ex !== undefined && ex !== null && !(Array.isArray(ex) && ex.every((x) => typeof x === 'string'))) throw invalid("context_management: 'exclude_tools' must be a list of tool names.");
    const ci = e.clear_tool_inputs;
    if (ci !== undefined && ci !== null && typeof ci !== 'boolean' && !(Array.isArray(ci) && ci.every((x) => typeof x === 'string'))) {
      throw invalid("context_management: 'clear_tool_inputs' must be a boolean or a list of tool names.");
    }
    out.push(e as unknown as ClearToolUsesEdit);
  }
  return out;
}

interface ToolUse {
  call: CanonicalToolCall;
  result: CanonicalMessage | undefined;
}

/** The conversation's tool uses in order: each call with the tool message that answered it, if any. */
function toolUses(messages: CanonicalMessage[]): ToolUse[] {
  const results = new Map<string, CanonicalMessage>();
  for (const m of messages) if (m.role === 'tool' && m.tool_call_id) results.set(m.tool_call_id, m);
  return messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((call) => ({ call, result: results.get(call.id) })) : []));
}

/**
 * Applies a `clear_tool_uses_20250919` edit to the canonical request before it is sent, as Anthropic
 * applies it before the prompt reaches the model: when the input (counted as `count_tokens` counts it)
 * is above the trigger's input tokens (default 100,000), or there are more tool uses than its
 * `tool_uses`, the results of every tool use but the last `keep` (default 3) are replaced with
 * CLEARED_RESULT, oldest first, except those of `exclude_tools` and those already cleared; with
 * `clear_tool_inputs` (true, or the tools named) their calls' inputs become `{}` too. Nothing is
 * cleared when that would free fewer than `clear_at_least` input tokens. What the caller keeps is not
 * changed: only what is sent. Returns the edit's report, or undefined when nothing was cleared.
 */
export async function clearToolUses(req: CanonicalRequest, tokenizer: string | undefined, edit: ClearToolUsesEdit): Promise<AppliedEdit | undefined> {
  const uses = toolUses(req.messages);
  const trigger = edit.trigger ?? DEFAULT_TRIGGER;
  const due = trigger.type === 'tool_uses' ? uses.length > trigger.value : (await countCanonicalTokens(tokenizer, req, true)) > trigger.value;
  if (!due) return undefined;
  const exclude = new Set(edit.exclude_tools ?? []);
  const inputs = edit.clear_tool_inputs;
  const clearsInput = (name: string) => inputs === true || (Array.isArray(inputs) && inputs.includes(name));
  const keep = edit.keep?.value ?? DEFAULT_KEEP;
  const cleared = uses.slice(0, Math.max(0, uses.length - keep)).filter((u) => !exclude.has(u.call.function.name) && u.result && canonicalText(u.result.content) !== CLEARED_RESULT);
  if (!cleared.length) return undefined;
  const before: string[] = [];
  const after: string[] = [];
  for (const u of cleared) {
    before.push(canonicalText(u.result!.content));
    after.push(CLEARED_RESULT);
    if (clearsInput(u.call.function.name)) {
      before.push(u.call.function.arguments);
      after.push('{}');
    }
  }
  const freed = Math.max(0, (await countTokensAtMost(tokenizer, before)) - (await countTokensAtMost(tokenizer, after)));
  if (edit.clear_at_least && freed < edit.clear_at_least.value) return undefined;
  for (const u of cleared) {
    u.result!.content = CLEARED_RESULT;
    if (clearsInput(u.call.function.name)) u.call.function.arguments = '{}';
  }
  return { type: 'clear_tool_uses_20250919', cleared_tool_uses: cleared.length, cleared_input_tokens: freed };
}

/** Applies each edit in order; the reports of those that cleared something (`applied_edits`). */
export async function applyContextEdits(req: CanonicalRequest, tokenizer: string | undefined, edits: ClearToolUsesEdit[]): Promise<AppliedEdit[]> {
  const applied: AppliedEdit[] = [];
  for (const e of edits) {
    const done = await clearToolUses(req, tokenizer, e);
    if (done) applied.push(done);
  }
  return applied;
}

/** The input tokens the applied edits cleared (what `count_tokens` takes off an edited request). */
export function clearedTokens(managed: { applied_edits: AppliedEdit[] } | AppliedEdit[] | undefined): number {
  const edits = Array.isArray(managed) ? managed : (managed?.applied_edits ?? []);
  return edits.reduce((n, e) => n + e.cleared_input_tokens, 0);
}
