import crypto from 'crypto';
import { Router, type Request, type Response } from 'express';
import type { KnobStore } from '../knobs';
import type { RequestLog } from '../request-log';
import { applyFaults, sleep, type FaultBody } from '../faults';
import { anthropicErrorType } from '../../../api/dialects/messages/errors';
import { countTokens, replyWords } from '../text';
import { answerFromToolResult, searchToolCall } from '../search-tools';
import { codeExecution, containerNotHeld } from '../code-execution';

type Block = Record<string, unknown> & { type: string };
type Msg = { role: string; content: string | Block[] };

/** Text a message carries: text blocks and tool results (so a reply after a tool result echoes it). */
function messageText(content: Msg['content']): string {
  if (typeof content === 'string') return content;
  return content
    .map((b) => {
      if (b.type === 'text') return String(b.text);
      if (b.type === 'tool_result') return typeof b.content === 'string' ? b.content : Array.isArray(b.content) ? (b.content as Block[]).map((x) => String(x.text ?? '')).join(' ') : '';
      return '';
    })
    .join(' ');
}

function anthropicError(res: Response, status: number, type: string, message: string): void {
  res.status(status).json({ type: 'error', error: { type, message } });
}

/**
 * A `status` knob's answer as Anthropic writes its errors (docs.claude.com/en/api/errors): `{type:
 * "error", error: {type, message}}`, the type by status (402 `billing_error`, 529 `overloaded_error`...).
 */
const anthropicFaultBody: FaultBody = (status, message) => ({ type: 'error', error: { type: anthropicErrorType(status), message } });

/** Which tool the simulated model uses, if any: a forced choice, or a user asking for a tool. */
function pickTool(body: Record<string, unknown>, lastUser: string): string | undefined {
  const tools = (body.tools as Array<{ name?: string; type?: string }> | undefined)?.filter((t) => t.name && (!t.type || t.type === 'custom'));
  const choice = body.tool_choice as { type?: string; name?: string } | undefined;
  if (!tools?.length || choice?.type === 'none') return undefined;
  if (choice?.type === 'tool' && choice.name) return choice.name;
  if (choice?.type === 'any' || /\b(use|call) (a |the )?tool\b/i.test(lastUser)) return tools[0].name;
  return undefined;
}

/*
 * The Message, usage and message_delta fields as api.anthropic.com sends them (docs/testing.md,
 * "Anthropic's answers, field for field"), from answers of the API called with a key and recorded in
 * public repositories (2026-09): claude-opus-4-6 JSON probes, `"content":[],"container":null,
 * "stop_reason":"max_tokens","stop_sequence":null,"stop_details":null,"usage":{"input_tokens":8,
 * "cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,
 * "ephemeral_1h_input_tokens":0},"output_tokens":1,"service_tier":"standard","inference_geo":"global"}`;
 * a claude-opus-5-5 stream's message_start (the same, then `"diagnostics":null`); a JSON tool_use answer
 * passed through LiteLLM (`..."output_tokens_details":{"thinking_tokens":0},"service_tier":"standard",
 * "inference_geo":"global"},"diagnostics":null}`); message_delta `"delta":{"stop_reason":"end_turn",
 * "stop_sequence":null,"stop_details":null},"usage":{"input_tokens":..,"cache_creation_input_tokens":..,
 * "cache_read_input_tokens":..,"output_tokens":..}` (a recorded claude-haiku-4-5 stream; Claude Code's,
 * with thinking, add `"output_tokens_details":{"thinking_tokens":0}`). So `output_tokens_details` only
 * where thinking ran; not sent, as the recorded answers without those features leave them out:
 * `server_tool_use` (no server tool runs here), `speed`, `context_management`, `input_transformations`.
 */
type Stopped = { stop_reason: string | null; stop_sequence: string | null; stop_details: null };

/** The Message: Anthropic's key order (model first), `container` null but with the code execution tool (code-execution.ts), `diagnostics` null (none asked for). */
function message(id: string, model: string, content: Block[], s: Stopped, usage: Record<string, unknown>, container: unknown = null): Record<string, unknown> {
  return { model, id, type: 'message', role: 'assistant', content, container, stop_reason: s.stop_reason, stop_sequence: s.stop_sequence, stop_details: s.stop_details, usage, diagnostics: null };
}

/** A Message's usage: the counts, the cache writes by lifetime (all under the default 5 minutes), the tier and where inference ran. */
function fullUsage(u: Record<string, unknown> & { output_tokens: number }, thinkingTokens: number | undefined): Record<string, unknown> {
  const written = typeof u.cache_creation_input_tokens === 'number' ? u.cache_creation_input_tokens : 0;
  return {
    input_tokens: u.input_tokens,
    cache_creation_input_tokens: u.cache_creation_input_tokens,
    cache_read_input_tokens: u.cache_read_input_tokens,
    cache_creation: { ephemeral_5m_input_tokens: written, ephemeral_1h_input_tokens: 0 },
    ...u,
    ...(thinkingTokens !== undefined ? { output_tokens_details: { thinking_tokens: thinkingTokens } } : {}),
    service_tier: 'standard',
    inference_geo: 'global',
  };
}

/** message_start's usage: the Message's, one output token so far, no output details yet. */
function startUsage(u: Record<string, unknown>): Record<string, unknown> {
  const { output_tokens_details: _details, ...rest } = u;
  return { ...rest, output_tokens: 1 };
}

/** message_delta's usage: the cumulative counts (and the thinking tokens where thinking ran), not the tier, geography or cache lifetimes. */
function deltaUsage(u: Record<string, unknown>): Record<string, unknown> {
  const keep = ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens', 'output_tokens', 'output_tokens_details'];
  return Object.fromEntries(keep.filter((key) => u[key] !== undefined).map((key) => [key, u[key]]));
}

/** Anthropic Messages (`POST /v1/messages`), JSON and streamed with named events, paced and broken by the knobs. */
export function messagesRoutes(knobs: KnobStore, log: RequestLog): Router {
  const r = Router();
  r.post('/v1/messages', async (req: Request, res: Response) => {
    log.record(req, res);
    if (!req.headers['anthropic-version']) return anthropicError(res, 400, 'invalid_request_error', 'anthropic-version: header is required');
    const body = req.body as Record<string, unknown>;
    if (typeof body.max_tokens !== 'number' || !Array.isArray(body.messages)) {
      return anthropicError(res, 400, 'invalid_request_error', 'max_tokens and messages are required');
    }
    const model = String(body.model ?? '');
    const k = knobs.take(model);
    if (await applyFaults(k, res, anthropicFaultBody)) return;
    // containers live in the workspace of the key that made them (code-execution.ts)
    const apiKey = String(req.headers['x-api-key'] ?? '');
    const notHeld = containerNotHeld(body, apiKey);
    if (notHeld !== undefined) return anthropicError(res, 404, 'not_found_error', `Container '${notHeld}' not found.`);
    const messages = body.messages as Msg[];
    const system = typeof body.system === 'string' ? body.system : Array.isArray(body.system) ? messageText(body.system as Block[]) : '';
    const prompt = [system, ...messages.map((m) => messageText(m.content))].join('\n');
    const lastUserMsg = [...messages].reverse().find((m) => m.role === 'user');
    const lastUser = messageText(lastUserMsg?.content ?? '');
    const maxTokens = body.max_tokens as number;
    // The user's own words (not tool results) and how many tool results answered them so far.
    const userTurns = messages.filter((m) => m.role === 'user' && (typeof m.content === 'string' || m.content.some((b) => b.type === 'text')));
    const asked = userTurns.at(-1);
    const askedText = asked ? messageText(typeof asked.content === 'string' ? asked.content : asked.content.filter((b) => b.type === 'text')) : '';
    const resultsSince = messages.slice(messages.lastIndexOf(asked as Msg) + 1).flatMap((m) => (typeof m.content === 'string' ? [] : m.content.filter((b) => b.type === 'tool_result'))).length;
    const answeringTool = Array.isArray(lastUserMsg?.content) && lastUserMsg.content.some((b) => b.type === 'tool_result');
    const toolNames = ((body.tools as Array<{ name?: string; type?: string }> | undefined) ?? []).filter((t) => t.name && (!t.type || t.type === 'custom')).map((t) => t.name!);
    const choice = body.tool_choice as { type?: string } | undefined;
    const search = choice?.type === 'none' ? undefined : searchToolCall(toolNames, askedText, resultsSince);
    const answer = answeringTool ? answerFromToolResult(lastUser) : undefined;
    // `max_tokens: 0` (Anthropic's prompt-cache pre-warming) generates nothing: no text, tool call or thinking
    const prewarm = maxTokens === 0;
    let words = prewarm ? [] : answer ? answer.split(' ').slice(0, maxTokens) : (k.replyWords ?? replyWords(lastUser, k.outputWords ?? 12, maxTokens));
    const tool = prewarm ? undefined : (search?.name ?? pickTool(body, lastUser));
    let stop: { reason: string; sequence: string | null } = { reason: tool ? 'tool_use' : words.length >= maxTokens ? 'max_tokens' : 'end_turn', sequence: null };
    const stops = (body.stop_sequences as string[] | undefined) ?? [];
    const cut = tool ? -1 : words.findIndex((w) => stops.includes(w));
    if (cut >= 0) {
      stop = { reason: 'stop_sequence', sequence: words[cut] };
      words = words.slice(0, cut);
    }
    const thinking = !prewarm && (body.thinking as { type?: string } | undefined)?.type === 'enabled' ? `Considering: ${lastUser.slice(0, 80)}` : undefined;
    const text = tool ? '' : words.join(' ');
    const input = tool ? (search?.input ?? { query: lastUser.slice(0, 100) }) : undefined;
    const toolId = `toolu_sim${crypto.randomBytes(6).toString('hex')}`;
    const thinkingTokens = thinking ? countTokens(thinking) : 0;
    const usage: Record<string, unknown> & { output_tokens: number } = {
      input_tokens: countTokens(prompt) + 3 * messages.length,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: (tool ? countTokens(JSON.stringify(input)) + 5 : countTokens(text)) + thinkingTokens,
    };
    Object.assign(usage, k.usageExtra ?? {});
    const id = `msg_sim${Date.now().toString(36)}${crypto.randomBytes(4).toString('hex')}`; // unique, as Anthropic's are (a thread continues from it)
    const content: Block[] = [];
    if (thinking) content.push({ type: 'thinking', thinking, signature: 'sim-signature' });
    const code = prewarm ? undefined : codeExecution(body, lastUser, apiKey);
    if (code) content.push(...code.blocks);
    if (text) content.push({ type: 'text', text });
    if (tool) content.push({ type: 'tool_use', id: toolId, name: tool, input });
    const full = fullUsage(usage, thinking ? thinkingTokens : undefined);
    const stopped = { stop_reason: stop.reason, stop_sequence: stop.sequence, stop_details: null };

    if (body.stream !== true) {
      res.json(message(id, model, content, stopped, full, code?.container));
      return;
    }

    res.status(200).setHeader('Content-Type', 'text/event-stream');
    res.flushHeaders();
    const ev = (data: Record<string, unknown> & { type: string }) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
    const pieces: string[] = [
      ev({ type: 'message_start', message: message(id, model, [], { stop_reason: null, stop_sequence: null, stop_details: null }, startUsage(full)) }),
    ];
    const start = (index: number, block: Record<string, unknown>) => {
      pieces.push(ev({ type: 'content_block_start', index, content_block: block }));
      if (index === 0) pieces.push(ev({ type: 'ping' })); // where Anthropic sends its first ping
    };
    content.forEach((b, index) => {
      if (b.type === 'thinking') {
        start(index, { type: 'thinking', thinking: '', signature: '' });
        pieces.push(ev({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: b.thinking } }));
        pieces.push(ev({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: b.signature } }));
      } else if (b.type === 'server_tool_use') {
        start(index, { type: 'server_tool_use', id: b.id, name: b.name, input: {} });
        pieces.push(ev({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } }));
      } else if (b.type.endsWith('_tool_result')) {
        start(index, b); // a server tool's result comes whole in its content_block_start
      } else if (b.type === 'text') {
        start(index, { type: 'text', text: '' });
        words.forEach((w, i) => pieces.push(ev({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: i === 0 ? w : ` ${w}` } })));
      } else {
        start(index, { type: 'tool_use', id: toolId, name: tool, input: {} });
        const json = JSON.stringify(input);
        for (let i = 0; i < json.length; i += 8) pieces.push(ev({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(i, i + 8) } }));
      }
      pieces.push(ev({ type: 'content_block_stop', index }));
    });
    pieces.push(ev({ type: 'message_delta', delta: code ? { ...stopped, container: code.container } : stopped, usage: deltaUsage(full) }));
    pieces.push(ev({ type: 'message_stop' }));
    for (let i = 0; i < pieces.length; i++) {
      if (res.destroyed) return;
      if (k.dropAfterChunks !== undefined && i >= k.dropAfterChunks) {
        await sleep(20); // let what was written reach the client, then cut the connection
        res.socket?.destroy();
        return;
      }
      res.write(pieces[i]);
      if (k.tokenDelayMs) await sleep(k.tokenDelayMs);
    }
    res.end();
  });
  return r;
}
