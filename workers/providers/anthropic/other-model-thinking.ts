import { isRecord } from '../../../shared/is-record';
import { CANONICAL_THINKING, withoutThinkingBlocks } from './thinking';

type Message = Record<string, unknown> & { role?: unknown; content?: unknown };

/** What names a deployment's model: its kind, its upstream id and (Bedrock) the base model that id may not name. */
type Deployment = { kind: string; upstreamModel: string; baseModel?: string };

/**
 * The Claude model a deployment serves, as Anthropic's API names it (`claude-sonnet-4-5-20250929`):
 * an Anthropic-native upstream's id, or a Bedrock id with its inference profile's region prefix,
 * `anthropic.` and version suffix taken off (`us.anthropic.claude-sonnet-4-5-20250929-v1:0`, an ARN
 * ending in one, a deployment's `base_model`); undefined for any other model. An alias
 * (`claude-sonnet-4-5`) is not its dated snapshot: the two are not known to be the same model.
 */
export function claudeModelOf(d: Deployment): string | undefined {
  if (d.kind === 'anthropic') return /^claude-[a-z0-9.-]+$/i.test(d.upstreamModel) ? d.upstreamModel.toLowerCase() : undefined;
  if (d.kind !== 'bedrock') return undefined;
  const id = (d.baseModel || d.upstreamModel).split('/').at(-1)!.toLowerCase();
  return /(?:^|\.)anthropic\.(claude-[a-z0-9.-]+?)(?:-v\d+(?::\d+)?)?$/.exec(id)?.[1];
}

/**
 * Whether a fallback's deployment serves the very Claude model every Claude deployment of the model
 * asked for serves (`own`): Anthropic's signatures are "compatible across platforms (Claude APIs,
 * Amazon Bedrock, and Vertex AI)" (extended-thinking, "Thinking encryption"), so the same model on
 * another platform reads them; only another model needs them stripped.
 */
export function sameClaudeModel(own: Deployment[], fallback: Deployment): boolean {
  const model = claudeModelOf(fallback);
  const claudes = own.filter((d) => d.kind === 'anthropic' || d.kind === 'bedrock');
  return !!model && claudes.length > 0 && claudes.every((d) => claudeModelOf(d) === model);
}

const isThinking = (b: unknown) => isRecord(b) && (b.type === 'thinking' || b.type === 'redacted_thinking');
const answersTools = (m: Message | undefined, operation: string) =>
  operation === 'chat' ? m?.role === 'tool' : m?.role === 'user' && Array.isArray(m.content) && m.content.some((b) => isRecord(b) && b.type === 'tool_result');

/** An assistant message without its signed and redacted thinking (the chat shape's `thinking_blocks`, the Messages shape's blocks); the message itself when it has none. */
function stripped(m: Message, operation: string): Message {
  if (m.role !== 'assistant') return m;
  if (operation === 'chat') return withoutThinkingBlocks(m);
  return Array.isArray(m.content) && m.content.some(isThinking) ? { ...m, content: m.content.filter((b) => !isThinking(b)) } : m;
}

/**
 * A chat job's body (operation `messages` or `chat`) for a fallback model's Claude deployment: the
 * history without the signed and redacted thinking another model made. Anthropic: "When you switch
 * models, for example after a classifier refusal fallback, strip `thinking` and `redacted_thinking`
 * blocks from prior assistant turns. Thinking blocks are tied to the model that produced them."
 * (https://platform.claude.com/docs/en/build-with-claude/adaptive-thinking). When that leaves the
 * final assistant turn of a tool loop (the one the trailing tool results answer) without its
 * thinking, a manual thinking config (`thinking` or `anthropic_thinking` of type `enabled`) is not
 * sent: Anthropic refuses such a turn with thinking enabled ("To avoid this requirement, disable
 * `thinking`") and otherwise disables it itself ("the API automatically disables thinking for that
 * request": extended-thinking, "Graceful thinking degradation"). Adaptive thinking and an effort stay:
 * "In adaptive mode, thinking is optional for the model" (adaptive-thinking), so a turn without it is
 * one the model could have written. The body itself when there is nothing to strip.
 */
export function withoutOtherModelsThinking(operation: string, body: Record<string, unknown>): Record<string, unknown> {
  if ((operation !== 'chat' && operation !== 'messages') || !Array.isArray(body.messages)) return body;
  const messages = body.messages as Message[];
  const out = messages.map((m) => (isRecord(m) ? stripped(m, operation) : m));
  if (out.every((m, i) => m === messages[i])) return body;
  let last = messages.length - 1;
  while (last >= 0 && operation === 'chat' && answersTools(messages[last], operation) && answersTools(messages[last - 1], operation)) last--;
  const final = last - 1;
  const next: Record<string, unknown> = { ...body, messages: out };
  if (final >= 0 && answersTools(messages[last], operation) && out[final] !== messages[final]) {
    for (const k of ['thinking', CANONICAL_THINKING]) if (isRecord(next[k]) && next[k].type === 'enabled') delete next[k];
  }
  return next;
}
