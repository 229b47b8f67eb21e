import type { ContentBlock, ConverseRequest, ImageFormat, Message, SystemContentBlock, Tool, ToolChoice } from '@aws-sdk/client-bedrock-runtime';
import { ApiError } from '../../../shared/errors/ApiError';
import { nonFunctionTool, toolUse, type ToolUse } from '../tool-choice';
import { eachPart, imageUrlOf } from '../parts';
import { isFailedResult, toolMediaOf } from '../tool-results';
import { blankStop, emptyStop, refuseChoicesAndLogprobs, refuseStops, refuseUnexpressible } from '../unsupported';
import type { ThinkingBlock } from '../anthropic/thinking';
import { isClaude, reasoningBlocks, reasoningRequest, refuseReasoning } from './reasoning';

export { isClaude };

type Part = Record<string, unknown> & { type: string; cache_control?: unknown };
type CMessage = { role: string; content?: string | Part[] | null; tool_calls?: Array<{ id: string; function: { name: string; arguments?: string } }>; tool_call_id?: string; thinking_blocks?: ThinkingBlock[]; tool_media?: unknown; is_error?: unknown };

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;
const IMAGE_FORMATS: Record<string, ImageFormat> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };
const CACHE_POINT: ContentBlock = { cachePoint: { type: 'default' } };

/** 400 `unsupported_parameter` naming the field: Converse cannot say it and dropping it would change the answer. */
export function refuse(param: string, why: string): ApiError {
  return new ApiError(400, 'unsupported_parameter', `\`${param}\` is not supported on this model (Bedrock Converse): ${why}`, { param });
}

/** A content part Converse has no block for: neither text nor an image. */
const partRefused = (type: unknown) => refuse('messages', `content part type '${String(type)}' has no Converse form here.`);

/** An image URL's Converse format and base64 data: a data URL of PNG, JPEG, GIF or WebP, else refused. */
function imageData(url: string): { format: ImageFormat; data: string } {
  const m = DATA_URL.exec(url);
  const format = m && IMAGE_FORMATS[m[1].toLowerCase()];
  if (!m || !format) throw refuse('messages', 'images must be base64 data URLs of PNG, JPEG, GIF or WebP (Converse takes image bytes, not URLs).');
  return { format, data: m[2] };
}

function imageBlock(url: string): ContentBlock {
  const { format, data } = imageData(url);
  return { image: { format, source: { bytes: Buffer.from(data, 'base64') } } };
}

function partBlocks(p: Part, claude: boolean): ContentBlock[] {
  let block: ContentBlock;
  if (p.type === 'text') {
    if (!p.text) return [];
    block = { text: String(p.text) };
  } else if (p.type === 'image_url') block = imageBlock(imageUrlOf(p));
  else throw partRefused(p.type);
  return p.cache_control && claude ? [block, CACHE_POINT] : [block];
}

function blocksOf(content: CMessage['content'], claude: boolean): ContentBlock[] {
  if (content == null || content === '') return [];
  if (typeof content === 'string') return [{ text: content }];
  return content.flatMap((p) => partBlocks(p, claude));
}

function textOf(content: CMessage['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? []).map((p) => (p.type === 'text' ? String(p.text ?? '') : '')).join('\n');
}

function parseInput(args: string | undefined): Record<string, unknown> {
  try {
    const v = JSON.parse(args || '{}') as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    return { _raw: args };
  }
}

/**
 * A Claude model's user message, its tool results' images (`tool_media`: tool-results.ts) put inside
 * the toolResult they came from in the turn just built (`turn`), as Anthropic's tool_result takes
 * them (ToolResultContentBlock's `image`); the blank text block of an empty result gives way to them.
 * A part whose tool result is not in that turn stays a block of the user turn.
 */
function intoToolResults(turn: Message | undefined, m: CMessage): ContentBlock[] {
  const ids = toolMediaOf(m);
  const parts = Array.isArray(m.content) ? m.content : [];
  if (!ids.length || turn?.role !== 'user') return blocksOf(m.content, true);
  const results = new Map(turn.content!.flatMap((b) => (b.toolResult ? [[String(b.toolResult.toolUseId), b.toolResult] as const] : [])));
  return parts.flatMap((p, i) => {
    const result = i < ids.length && p.type === 'image_url' ? results.get(ids[i]) : undefined;
    if (!result) return partBlocks(p, true);
    const content = (result.content ?? []).filter((c) => c.text !== '');
    content.push({ image: imageBlock(imageUrlOf(p)).image! });
    result.content = content;
    return [];
  });
}

/** Canonical messages → Converse system blocks + alternating user/assistant messages (neighbours merged). */
function conversation(messages: CMessage[], claude: boolean): { system: SystemContentBlock[]; messages: Message[] } {
  const system: SystemContentBlock[] = [];
  const out: Message[] = [];
  const push = (role: 'user' | 'assistant', blocks: ContentBlock[]) => {
    if (!blocks.length) return;
    const last = out.at(-1);
    if (last?.role === role) last.content!.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'developer') {
      const parts = typeof m.content === 'string' ? [{ type: 'text', text: m.content } as Part] : (m.content ?? []);
      for (const p of parts) {
        if (p.type === 'text' && p.text) system.push({ text: String(p.text) });
        if (p.cache_control && claude) system.push({ cachePoint: { type: 'default' } });
      }
    } else if (m.role === 'user') push('user', claude ? intoToolResults(out.at(-1), m) : blocksOf(m.content, claude));
    else if (m.role === 'tool') {
      // An empty result stays one blank text block: `content: []` is refused by some models (docs/providers/bedrock.md).
      // a failed result is ToolResultBlock.status "error" (Claude's is_error)
      push('user', [{ toolResult: { toolUseId: String(m.tool_call_id), content: [{ text: textOf(m.content) }], ...(isFailedResult(m) ? { status: 'error' as const } : {}) } }]);
    } else if (m.role === 'assistant') {
      // the turn's signed reasoning first, as Claude wrote it (Bedrock refuses a tool-using turn with thinking on without it)
      const blocks = [...reasoningBlocks(m.thinking_blocks, claude), ...blocksOf(m.content, claude)];
      for (const c of m.tool_calls ?? []) {
        blocks.push({ toolUse: { toolUseId: c.id, name: c.function.name, input: parseInput(c.function.arguments) as never } });
      }
      push('assistant', blocks);
    } else throw refuse('messages', `message role '${m.role}' has no Converse form.`);
  }
  // Converse needs a user message; a chat of system messages alone (valid on OpenAI) is that text as the user's turn.
  if (!out.length && system.length) return { system: [], messages: [{ role: 'user', content: system as ContentBlock[] }] };
  return { system, messages: out };
}

type FnTool = { type: string; function?: { name: string; description?: string; parameters?: unknown; strict?: boolean | null } };

function toolChoice(c: ToolUse<FnTool>['choice']): ToolChoice | undefined {
  if (c === 'required') return { any: {} };
  if (c === 'auto') return { auto: {} };
  if (c && typeof c === 'object') return { tool: { name: c.named } };
  return undefined;
}

/** Whether the conversation holds tool calls or results (Converse then requires `toolConfig`). */
function hasToolBlocks(messages: CMessage[]): boolean {
  return messages.some((m) => m?.role === 'tool' || (m?.role === 'assistant' && (m.tool_calls?.length ?? 0) > 0));
}

/** Content parts of user and assistant messages without a Converse form: an image that is not a data URL of a known format, a part other than text or an image. */
function refuseParts(messages: unknown): void {
  eachPart(messages, (p) => {
    if (p.type === 'image_url') imageData(imageUrlOf(p));
    else if (p.type !== 'text') throw partRefused(p.type);
  });
}

/**
 * Fields that change the answer and that Converse cannot express, for a deployment of
 * `upstreamModel`: those no translated upstream can express (refuseChoicesAndLogprobs: `n` above 1, log
 * probabilities; refuseUnexpressible: `logit_bias`, audio output, `web_search_options`, the legacy functions,
 * `moderation`, a `verbosity` other than `medium`, an unknown `response_format` type), and Converse's
 * own. The routing of mixed pools asks the same question (api/dispatch/route.ts), so every refusal
 * that depends on the request and the upstream model alone is here.
 */
export function refuseUntranslatable(body: Record<string, unknown>, upstreamModel: string): void {
  refuseChoicesAndLogprobs(body);
  refuseUnexpressible(body);
  for (const k of ['frequency_penalty', 'presence_penalty'] as const) if (typeof body[k] === 'number' && body[k] !== 0) throw refuse(k, 'Converse has no repetition penalties.');
  if (body.parallel_tool_calls === false) throw refuse('parallel_tool_calls', 'Converse cannot forbid parallel tool calls.');
  // `prediction` (Predicted Outputs) only speeds OpenAI's answer up: not sent, as the Anthropic and Gemini translations leave it
  const fmt = body.response_format as { type?: string } | undefined;
  if (fmt?.type === 'json_object') throw refuse('response_format', "JSON mode without a schema has no Converse form (use type 'json_schema').");
  if (typeof body.top_k === 'number' && !isClaude(upstreamModel)) throw refuse('top_k', 'only Claude models on Bedrock take top_k.');
  // Converse takes stop sequences of one character at least; Claude on Bedrock refuses whitespace-only ones as Anthropic does
  if (isClaude(upstreamModel)) refuseStops(body, blankStop, 'sequences must contain a non-whitespace character on this model.');
  else refuseStops(body, emptyStop, 'sequences must not be empty on this model.');
  refuseReasoning(body, upstreamModel);
  if (nonFunctionTool(body) >= 0) throw refuse('tools', 'only function tools have a Converse form.');
  const tools = Array.isArray(body.tools) ? body.tools : [];
  const messages = Array.isArray(body.messages) ? (body.messages as CMessage[]) : [];
  if (tools.length && body.tool_choice === 'none' && hasToolBlocks(messages)) throw refuse('tool_choice', "'none' cannot be expressed while the conversation holds tool calls.");
  refuseParts(messages);
}

/**
 * A canonical chat request → a Converse request (the SDK's ConverseRequest type) for `upstreamModel`
 * (the `modelId` called), whose family and version are read from `baseModel` when the deployment names
 * one (an application inference profile's ARN does not name its model). Cache hints (`cache_control`
 * on a text part) become cache points on Claude models and have no effect elsewhere.
 */
export function canonicalToConverse(body: Record<string, unknown>, upstreamModel: string, baseModel = upstreamModel): ConverseRequest {
  refuseUntranslatable(body, baseModel);
  const claude = isClaude(baseModel);
  const conv = conversation((body.messages as CMessage[]) ?? [], claude);
  const out: ConverseRequest = { modelId: upstreamModel, messages: conv.messages };
  if (conv.system.length) out.system = conv.system;
  const inference: NonNullable<ConverseRequest['inferenceConfig']> = {};
  const reasoning = reasoningRequest(body, baseModel);
  const max = reasoning.maxTokens ?? body.max_completion_tokens ?? body.max_tokens;
  if (typeof max === 'number') inference.maxTokens = max;
  // Claude's range is 0..1 (as the Anthropic adapter sends it; Bedrock answers 400 above it); OpenAI's 0..2
  if (typeof body.temperature === 'number') inference.temperature = claude ? Math.min(1, body.temperature) : body.temperature;
  if (typeof body.top_p === 'number') inference.topP = body.top_p;
  const stop = typeof body.stop === 'string' ? [body.stop] : Array.isArray(body.stop) ? (body.stop as string[]) : [];
  if (stop.length) inference.stopSequences = stop;
  if (Object.keys(inference).length) out.inferenceConfig = inference;
  const extra = { ...(typeof body.top_k === 'number' ? { top_k: body.top_k } : {}), ...reasoning.fields }; // top_k: Claude only (refused elsewhere)
  if (Object.keys(extra).length) out.additionalModelRequestFields = extra as never;
  // the stop sequence that matched, where the model reports it (Claude's `stop_sequence`; AWS's own example of a path):
  // "if the JSON Pointer is valid, but the requested field is not in the model response, it is ignored by Converse"
  if (stop.length) out.additionalModelResponseFieldPaths = ['/stop_sequence'];
  const tools = (body.tools as FnTool[] | undefined) ?? [];
  const use = tools.length ? toolUse(tools, body.tool_choice) : { tools, choice: undefined };
  const fns = use.tools;
  // Converse has no "none": leaving the tools out means the same (a history with tool blocks was refused).
  if (fns.length && body.tool_choice !== 'none') {
    const specs: Tool[] = fns.map((t) => ({
      toolSpec: {
        name: t.function!.name,
        ...(t.function!.description ? { description: t.function!.description } : {}),
        inputSchema: { json: (t.function!.parameters ?? { type: 'object', properties: {} }) as never },
        // a strict function is Converse's structured-output enforcement on the tool's input (ToolSpecification.strict)
        ...(t.function!.strict === true ? { strict: true } : {}),
      },
    }));
    const choice = toolChoice(use.choice);
    out.toolConfig = { tools: specs, ...(choice ? { toolChoice: choice } : {}) };
  }
  const fmt = body.response_format as { type?: string; json_schema?: { name?: string; description?: string; schema?: unknown } } | undefined;
  if (fmt?.type === 'json_schema') {
    const js = fmt.json_schema ?? {};
    out.outputConfig = {
      textFormat: {
        type: 'json_schema',
        structure: { jsonSchema: { schema: JSON.stringify(js.schema ?? {}), ...(js.name ? { name: js.name } : {}), ...(js.description ? { description: js.description } : {}) } },
      },
    };
  }
  return out;
}
