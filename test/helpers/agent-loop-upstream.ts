import { chunk, usageChunk, type Received, type Reply, type ScriptedUpstream } from './scripted-upstream';
import { thinking, thinkingOn, thinkingRefusal, type Message } from './thinking-upstream';

/** The tool call a scripted model asks for: a name among those the client offers, and its input. */
export interface ToolAsk {
  name: string;
  input: Record<string, unknown>;
}

type Block = { type: string; text?: string; content?: unknown; tool_use_id?: string };
type Msg = { role: string; content?: unknown; tool_call_id?: string };

/** The text of a tool result's content: a string, or text blocks / parts (Anthropic's and chat's both carry `text`). */
const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((p: { text?: string }) => p.text ?? '').join('') : '';

/** The tool results a request carries, by the call id they answer: Anthropic `tool_result` blocks or chat `tool` messages. */
export function toolResults(kind: 'anthropic' | 'openai', body: { messages: Msg[] }): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of body.messages) {
    if (kind === 'openai' && m.role === 'tool') out.set(String(m.tool_call_id), textOf(m.content));
    if (kind === 'anthropic' && m.role === 'user' && Array.isArray(m.content)) {
      for (const b of m.content as Block[]) if (b.type === 'tool_result') out.set(String(b.tool_use_id), textOf(b.content));
    }
  }
  return out;
}

/** The names of the tools a request offers (Anthropic `{name}`, chat `{function: {name}}`). */
export const toolNames = (body: { tools?: Array<{ name?: string; function?: { name: string } }> }): string[] =>
  (body.tools ?? []).map((t) => t.name ?? t.function?.name ?? '');

/** JSON cut in three, as a model streams a call's input. */
function pieces(json: string): string[] {
  const a = Math.floor(json.length / 3);
  return [json.slice(0, a), json.slice(a, 2 * a), json.slice(2 * a)];
}

const USAGE = { input_tokens: 20, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
const start = (id: string) => ({
  type: 'message_start',
  message: { id, type: 'message', role: 'assistant', model: 'up-model', content: [], stop_reason: null, stop_sequence: null, usage: USAGE },
});
const textBlock = (index: number, text: string) => [
  { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index, delta: { type: 'text_delta', text } },
  { type: 'content_block_stop', index },
];
const end = (stop_reason: string) => [
  { type: 'message_delta', delta: { stop_reason, stop_sequence: null }, usage: { output_tokens: 12 } },
  { type: 'message_stop' },
];

/** A call the scripted model makes: its id and what it asks. */
export interface Call extends ToolAsk {
  id: string;
}

/** The text the scripted model says before its calls. */
export const PREAMBLE = 'Let me look.';

/** What the scripted model thinks before its calls (Anthropic: a signed thinking block; chat: `reasoning_content`). */
export const REASONING = 'The user wants the files read.';

/** A thinking block as Anthropic streams it: opened empty, its text (none when the request's `display` is `omitted`), its signature just before it stops. */
function thinkingBlock(index: number, text: string): unknown[] {
  const b = thinking(text);
  return [
    { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } },
    ...(text ? [{ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: text } }] : []),
    { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: b.signature } },
    { type: 'content_block_stop', index },
  ];
}

/**
 * A Messages stream as Anthropic sends tool calls (the SDK's RawMessageStreamEvent): with thinking
 * on, a signed thinking block first; a text block; then each `tool_use` block opened with empty
 * input and its JSON in `input_json_delta` pieces (the first empty, as the API sends it),
 * `stop_reason: "tool_use"`.
 */
export function anthropicToolCalls(calls: Call[], think?: string): unknown[] {
  const head = think === undefined ? [] : thinkingBlock(0, think);
  const at = head.length ? 1 : 0;
  const blocks = calls.flatMap(({ id, name, input }, i) => [
    { type: 'content_block_start', index: at + i + 1, content_block: { type: 'tool_use', id, name, input: {}, caller: { type: 'direct' } } },
    ...['', ...pieces(JSON.stringify(input))].map((partial_json) => ({ type: 'content_block_delta', index: at + i + 1, delta: { type: 'input_json_delta', partial_json } })),
    { type: 'content_block_stop', index: at + i + 1 },
  ]);
  return [start('msg_loop_1'), ...head, ...textBlock(at, PREAMBLE), ...blocks, ...end('tool_use')];
}

/**
 * A chat-completions stream as a reasoning OpenAI-compatible server (vLLM, DeepSeek) sends tool
 * calls: `reasoning_content`, the text, then each call's index, id, type and name with empty
 * arguments, its arguments in pieces, `finish_reason: "tool_calls"`, the usage chunk.
 */
export function chatToolCalls(calls: Call[]): unknown[] {
  const deltas = calls.flatMap(({ id, name, input }, index) => [
    chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] }),
    ...pieces(JSON.stringify(input)).map((a) => chunk({ tool_calls: [{ index, function: { arguments: a } }] })),
  ]);
  return [chunk({ role: 'assistant', content: '', refusal: null }), chunk({ reasoning_content: REASONING }), chunk({ content: PREAMBLE }), ...deltas, chunk({}, 'tool_calls'), usageChunk()];
}

/** A streamed text answer in the upstream's own wire format. */
export const textAnswer = (kind: 'anthropic' | 'openai', text: string): unknown[] =>
  kind === 'anthropic'
    ? [start('msg_loop_2'), ...textBlock(0, text), ...end('end_turn')]
    : [chunk({ role: 'assistant', content: '', refusal: null }), chunk({ content: text }), chunk({}, 'stop'), usageChunk()];

/**
 * Scripts `up` as a model in a tool loop: its first request is answered with `calls` (in parallel),
 * every later one with `answer(the texts of their results in call order, "(no result)" for a missing
 * one; the request)`, so that a loop that lost its results ends at once with an answer saying so.
 * It reasons as its kind does: an `anthropic` one thinks when the request turns thinking on and
 * refuses, as Anthropic does, a tool result whose call's turn lost its signed thinking
 * (thinkingRefusal); an `openai` one always answers `reasoning_content`. Streamed as asked; a
 * request that does not stream gets a 400 (the agents stream every turn).
 */
export function scriptToolLoop(up: ScriptedUpstream, calls: Call[], answer: (results: string[], body: Received['body']) => string): void {
  const kind = up.kind as 'anthropic' | 'openai';
  up.otherwise = (req: Received): Reply => {
    if (!req.body?.stream) return { kind: 'json', status: 400, body: { error: { message: 'this script streams only' } } };
    const on = kind === 'anthropic' && thinkingOn(req.body);
    const refused = kind === 'anthropic' ? thinkingRefusal(req.body as { messages: Message[] }, on) : undefined;
    if (refused) return refused;
    if (up.received.length > 1) {
      const got = toolResults(kind, req.body);
      return { kind: 'sse', events: textAnswer(kind, answer(calls.map((c) => got.get(c.id) ?? '(no result)'), req.body)) };
    }
    const think = on ? (req.body.thinking?.display === 'omitted' ? '' : REASONING) : undefined;
    return { kind: 'sse', events: kind === 'anthropic' ? anthropicToolCalls(calls, think) : chatToolCalls(calls) };
  };
}

/** The bytes of every base64 image a request carries, in order and at any depth (a tool_result's too): chat `image_url` data URLs, Anthropic `base64` image sources. */
export function imagesIn(v: unknown, out: Buffer[] = []): Buffer[] {
  if (Array.isArray(v)) v.forEach((x) => imagesIn(x, out));
  else if (v && typeof v === 'object') {
    const o = v as { type?: string; image_url?: { url?: string }; source?: { type?: string; data?: string } };
    const url = o.type === 'image_url' ? /^data:image\/[a-z]+;base64,(.*)$/s.exec(o.image_url?.url ?? '')?.[1] : undefined;
    const data = o.type === 'image' && o.source?.type === 'base64' ? o.source.data : url;
    if (data) out.push(Buffer.from(data, 'base64'));
    else Object.values(o).forEach((x) => imagesIn(x, out));
  }
  return out;
}
