import { anthropicApi } from './api';
import { ApiError } from '../../../shared/errors/ApiError';
import { refuseNonFunctionTools, toolUse, type ToolUse } from '../tool-choice';
import { blankStop, given, refuseChoicesAndLogprobs, refuseStops, refuseUnexpressible, unsupported } from '../unsupported';
import { eachPart, imageUrlOf, type ContentPart } from '../parts';
import { isFailedResult, toolMediaOf } from '../tool-results';
import { CANONICAL_THINKING, checkedThinkingBlocks, refuseMalformedThinking } from './thinking';
import { isRecord } from '../../../shared/is-record';

type Part = Record<string, unknown> & { type: string };
type Block = Record<string, unknown> & { type: string };
type CMessage = { role: string; content?: string | Part[] | null; tool_calls?: Array<{ id: string; function: { name: string; arguments?: string } }>; tool_call_id?: string; thinking_blocks?: unknown; tool_media?: unknown; is_error?: unknown };
type Turn = { role: 'user' | 'assistant'; content: Block[] };

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

function mediaBlock(kind: 'image' | 'document', url: string, title?: string): Block {
  const m = DATA_URL.exec(url);
  const source = m ? { type: 'base64', media_type: m[1], data: m[2] } : { type: 'url', url };
  return { type: kind, source, ...(kind === 'document' && title ? { title } : {}) };
}

/**
 * The block with the part's `cache_control` (Anthropic's CacheControlEphemeral on a text or image
 * block, as LiteLLM's chat callers put it on a content part, and as the Bedrock adapter turns it into
 * a cache point), when it has one.
 */
function cached(block: Block, p: ContentPart): Block {
  if (isRecord(p.cache_control)) block.cache_control = p.cache_control;
  return block;
}

/**
 * A user or assistant content part as a messages block: text, an image (base64 or URL source), a
 * document from a file part's `file_data`; any other part (`input_audio`, a file without data) is
 * refused (400). The one reading of parts: the translation and the refusal checked before it and by
 * routing (refuseUntranslatable) alike.
 */
function partBlock(p: ContentPart): Block {
  switch (p.type) {
    case 'text':
      return cached({ type: 'text', text: String(p.text ?? '') }, p);
    case 'image_url':
      return cached(mediaBlock('image', imageUrlOf(p)), p);
    case 'file': {
      const f = p.file as { file_data?: string; filename?: string };
      if (!f?.file_data) throw new ApiError(400, 'invalid_request', 'File parts need file_data on this model.');
      return mediaBlock('document', f.file_data, f.filename);
    }
    default:
      throw new ApiError(400, 'invalid_request', `Content part type '${String(p.type)}' is not supported on this model.`);
  }
}

function blocksOf(content: CMessage['content']): Block[] {
  if (content == null || content === '') return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map(partBlock);
}

function parseInput(args: string | undefined): Record<string, unknown> {
  try {
    const v = JSON.parse(args || '{}') as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    return { _raw: args };
  }
}

function textOf(content: CMessage['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? []).map((p) => (p.type === 'text' ? String(p.text ?? '') : '')).join('\n');
}

/**
 * A user message's blocks, its tool results' images and documents (`tool_media`: tool-results.ts) put
 * inside the tool_result they came from, in the turn just built (`turn`): Anthropic's tool_result
 * `content` is a string or a list of text, image and document blocks (the SDK's ToolResultBlockParam;
 * https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use "tool_result ...
 * content: ... a list of nested content blocks ... text, image, or document"). A part whose tool
 * result is not in that turn stays a block of the user turn.
 */
function intoToolResults(turn: Turn | undefined, m: CMessage): Block[] {
  const blocks = blocksOf(m.content);
  const ids = toolMediaOf(m);
  if (!ids.length || turn?.role !== 'user') return blocks;
  const results = new Map(turn.content.filter((b) => b.type === 'tool_result').map((b) => [String(b.tool_use_id), b]));
  return blocks.filter((block, i) => {
    const result = i < ids.length ? results.get(ids[i]) : undefined;
    if (!result) return true;
    const c = result.content;
    const content: Block[] = Array.isArray(c) ? (c as Block[]) : typeof c === 'string' && c !== '' ? [{ type: 'text', text: c }] : [];
    content.push(block);
    result.content = content;
    return false;
  });
}

/**
 * Canonical messages → Anthropic system + alternating turns (same-role neighbours merged). An
 * assistant message's signed thinking blocks (`thinking_blocks`) come back first, in order, before
 * its text and tool calls, unchanged: Anthropic refuses a tool-using turn without them when thinking is on.
 */
function turns(messages: CMessage[]): { system?: string | Block[]; turns: Turn[] } {
  const system: string[] = [];
  const systemBlocks: Block[] = [];
  const out: Turn[] = [];
  const push = (role: Turn['role'], blocks: Block[]) => {
    if (!blocks.length) return;
    const last = out.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  messages.forEach((m, i) => {
    if (m.role === 'system' || m.role === 'developer') {
      system.push(textOf(m.content));
      if (typeof m.content === 'string') systemBlocks.push({ type: 'text', text: m.content });
      else for (const p of m.content ?? []) if (p.type === 'text' && p.text) systemBlocks.push(cached({ type: 'text', text: String(p.text) }, p));
    }
    else if (m.role === 'user') push('user', intoToolResults(out.at(-1), m));
    else if (m.role === 'tool') push('user', [{ type: 'tool_result', tool_use_id: String(m.tool_call_id), content: textOf(m.content), ...(isFailedResult(m) ? { is_error: true } : {}) }]);
    else if (m.role === 'assistant') {
      const blocks: Block[] = [...(checkedThinkingBlocks(m.thinking_blocks, i) ?? []), ...blocksOf(m.content)];
      for (const c of m.tool_calls ?? []) blocks.push({ type: 'tool_use', id: c.id, name: c.function.name, input: parseInput(c.function.arguments) });
      push('assistant', blocks);
    } else throw new ApiError(400, 'invalid_request', `Message role '${m.role}' is not supported on this model.`);
  });
  const text = system.length ? system.join('\n\n') : undefined;
  // Anthropic needs at least one turn; a chat of system messages alone (valid on OpenAI) is that text as the user's turn.
  if (!out.length && text) return { turns: [{ role: 'user', content: [{ type: 'text', text }] }] };
  // system text blocks when one carries a cache breakpoint (TextBlockParam.cache_control), else the text
  return { system: systemBlocks.some((b) => b.cache_control) ? systemBlocks.filter((b) => b.text) : text, turns: out };
}

type CTool = { type: string; function?: { name: string; description?: string; parameters?: unknown; strict?: boolean | null } };

function toolChoice(c: ToolUse<CTool>['choice'], parallel: unknown): Record<string, unknown> | undefined {
  let choice: Record<string, unknown> | undefined;
  if (c === 'required') choice = { type: 'any' };
  else if (c === 'none') choice = { type: 'none' };
  else if (c === 'auto') choice = { type: 'auto' };
  else if (c) choice = { type: 'tool', name: c.named };
  // Anthropic's ToolChoiceNone is `{type: 'none'}` alone: no parallel calls to disable when none may be made
  if (parallel === false && choice?.type !== 'none') choice = { ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return choice;
}


/**
 * OpenAI's `reasoning_effort` → Anthropic's `output_config.effort` (the SDK's OutputConfig: `low`,
 * `medium`, `high`, `xhigh`, `max`), the same value; `minimal`, which Anthropic lacks, takes its
 * lowest level (as Gemini's budgets put `minimal` with `low`). `none` is `thinking: {type:
 * "disabled"}` instead (no effort level means "no reasoning"). Not a thinking budget: `thinking:
 * {type: "enabled"}` refuses a temperature, `top_k`, a forced tool choice and a `max_tokens` at or
 * below the budget, and needs the signed thinking blocks of earlier tool-calling turns back, which a
 * chat-completions history does not carry; the effort has none of these constraints. The messages
 * dialect maps `output_config.effort` to `reasoning_effort` (api/dialects/messages/request.ts), so a
 * translated request sends what the native bypass would.
 */
export const EFFORT: Record<string, 'low' | 'medium' | 'high' | 'xhigh' | 'max'> = { minimal: 'low', low: 'low', medium: 'medium', high: 'high', xhigh: 'xhigh', max: 'max' };

/**
 * Canonical fields the messages API cannot express and that would change the answer: those no
 * translated upstream can (refuseChoicesAndLogprobs: `n` above 1, log probabilities; refuseUnexpressible: `logit_bias`, audio
 * output, `web_search_options`, the legacy functions, `moderation`, a `verbosity` other than
 * `medium`, an unknown `response_format` type), a `reasoning_effort` without an Anthropic form,
 * `stop` entries Anthropic refuses (empty or whitespace only); `tools` entries other than
 * `function`, content parts partBlock refuses. Refused (400 naming the field), never dropped, as the
 * Gemini and Bedrock adapters refuse them. The routing of mixed pools asks the same question
 * (api/dispatch/route.ts), so such a request goes to a deployment that can take it.
 */
export function refuseUntranslatable(body: Record<string, unknown>): void {
  refuseChoicesAndLogprobs(body);
  refuseUnexpressible(body);
  const effort = body.reasoning_effort;
  if (given(effort) && effort !== 'none' && !(typeof effort === 'string' && Object.hasOwn(EFFORT, effort))) throw unsupported('reasoning_effort', `'${String(effort)}' is not supported on this model.`);
  refuseStops(body, blankStop, 'sequences must contain a non-whitespace character on this model.');
  refuseNonFunctionTools(body);
  eachPart(body.messages, (p) => void partBlock(p));
  refuseMalformedThinking(body);
}

/**
 * A canonical chat request → an Anthropic messages request, so that chat-completions and responses
 * callers can use a model whose upstream speaks messages. A JSON schema response format becomes
 * `output_config.format`, `reasoning_effort` `output_config.effort` (EFFORT); hints without a
 * messages counterpart (JSON mode without a schema, seed, penalties, `prediction`, caching and
 * bookkeeping fields) are not sent; what would change the answer is refused (refuseUntranslatable).
 * The messages dialect's `thinking` (Anthropic's ThinkingConfigParam, carried as CANONICAL_THINKING)
 * is sent as it is, before `reasoning_effort: "none"` and a chat caller's own `thinking` object.
 */
export function canonicalToMessages(body: Record<string, unknown>, upstreamModel: string): Record<string, unknown> {
  refuseUntranslatable(body);
  const { system, turns: t } = turns((body.messages as CMessage[]) ?? []);
  const out: Record<string, unknown> = {
    model: upstreamModel,
    max_tokens: (body.max_completion_tokens ?? body.max_tokens ?? anthropicApi.defaultMaxTokens) as number,
    messages: t,
  };
  if (system) out.system = system;
  const tools = (body.tools as CTool[] | undefined) ?? [];
  if (tools.length) {
    const use = toolUse(tools, body.tool_choice);
    // a strict function (OpenAI's guarantee that the arguments follow its schema) is Anthropic's strict tool (the SDK's Tool.strict)
    out.tools = use.tools.map((x) => ({
      name: x.function!.name,
      ...(x.function!.description ? { description: x.function!.description } : {}),
      input_schema: x.function!.parameters ?? { type: 'object', properties: {} },
      ...(x.function!.strict === true ? { strict: true } : {}),
    }));
    const choice = toolChoice(use.choice, body.parallel_tool_calls);
    if (choice) out.tool_choice = choice;
  }
  const stop = body.stop;
  if (typeof stop === 'string') out.stop_sequences = [stop];
  else if (Array.isArray(stop) && stop.length) out.stop_sequences = stop;
  if (typeof body.temperature === 'number') out.temperature = Math.min(1, body.temperature); // Anthropic's range is 0..1
  if (typeof body.top_p === 'number') out.top_p = body.top_p;
  if (typeof body.top_k === 'number') out.top_k = body.top_k;
  if (typeof body.user === 'string') out.metadata = { user_id: body.user };
  const format = structuredOutput(body.response_format);
  const effort = typeof body.reasoning_effort === 'string' ? EFFORT[body.reasoning_effort] : undefined; // a value without one was refused
  if (format || effort) out.output_config = { ...(effort ? { effort } : {}), ...(format ? { format } : {}) };
  // the messages dialect's own `thinking` (CANONICAL_THINKING) as the caller wrote it, as the native bypass would send it
  if (isRecord(body[CANONICAL_THINKING])) out.thinking = body[CANONICAL_THINKING];
  else if (body.reasoning_effort === 'none') out.thinking = { type: 'disabled' };
  // a chat caller's own `thinking` (ThinkingConfigParam, as LiteLLM takes it)
  else if (isRecord(body.thinking)) out.thinking = body.thinking;
  return out;
}

/**
 * `response_format: {type: "json_schema", json_schema: {schema}}` → Anthropic's structured outputs,
 * `output_config.format: {type: "json_schema", schema}` (the schema as given; a model without
 * structured outputs answers the upstream's 400, as Bedrock's do). JSON mode without a schema
 * (`json_object`) has no messages form and stays a hint: OpenAI requires the prompt to ask for JSON.
 */
function structuredOutput(rf: unknown): { type: 'json_schema'; schema: Record<string, unknown> } | undefined {
  const schema = (rf as { type?: unknown; json_schema?: { schema?: unknown } } | undefined)?.json_schema?.schema;
  if ((rf as { type?: unknown } | undefined)?.type !== 'json_schema' || typeof schema !== 'object' || schema === null || Array.isArray(schema)) return undefined;
  return { type: 'json_schema', schema: schema as Record<string, unknown> };
}
