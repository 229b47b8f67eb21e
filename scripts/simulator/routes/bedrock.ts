import crypto from 'crypto';
import { Router, type Request, type Response } from 'express';
import type { KnobStore } from '../knobs';
import type { RequestLog } from '../request-log';
import { applyFaults, sleep } from '../faults';
import { countTokens, replyWords } from '../text';
import { eventFrame } from '../eventstream';

type Block = Record<string, unknown> & { text?: string; toolResult?: { content?: Array<{ text?: string }> }; cachePoint?: unknown };
type Msg = { role: string; content: Block[] };

/** Text a message carries: text blocks and tool results (so a reply after a tool result echoes it). */
function messageText(content: Block[]): string {
  return content.map((b) => b.text ?? (b.toolResult?.content ?? []).map((c) => c.text ?? '').join(' ')).filter(Boolean).join(' ');
}

/** An AWS JSON-protocol error: the type in `x-amzn-ErrorType`, `{message}` in the body. */
function awsError(res: Response, status: number, type: string, message: string): void {
  res.status(status).setHeader('x-amzn-ErrorType', `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`);
  res.json({ message });
}

const ERROR_TYPES: Record<number, string> = { 400: 'ValidationException', 403: 'AccessDeniedException', 404: 'ResourceNotFoundException', 429: 'ThrottlingException', 500: 'InternalServerException', 503: 'ServiceUnavailableException' };

/** Prompt prefixes seen before a cache point: the next request with the same prefix reads it. */
const cached = new Set<string>();

function cacheUsage(system: Block[], messages: Msg[]): { read: number; write: number } {
  const flat = [...system, ...messages.flatMap((m) => m.content)];
  const at = flat.map((b) => !!b.cachePoint).lastIndexOf(true);
  if (at < 0) return { read: 0, write: 0 };
  const prefix = flat.slice(0, at).map((b) => b.text ?? '').join('\n');
  const tokens = countTokens(prefix);
  const key = crypto.createHash('sha256').update(prefix).digest('hex');
  if (cached.has(key)) return { read: tokens, write: 0 };
  cached.add(key);
  return { read: 0, write: tokens };
}

/**
 * Converse's constraint on a ToolUseBlock's and a ToolResultBlock's `toolUseId` ("Length Constraints:
 * Minimum length of 1. Maximum length of 64. Pattern: ^[a-zA-Z0-9_-]+$", AWS Bedrock API Reference),
 * refused as AWS words a constraint: "N validation error(s) detected: Value at '<path>' failed to satisfy
 * constraint: Member must have length less than or equal to 64", the path's list indices from 1
 * (as quoted in openclaw/openclaw issue 12892 and BerriAI/litellm issue 19384).
 */
function toolUseIdErrors(messages: Msg[]): string | undefined {
  const found: string[] = [];
  messages.forEach((m, i) =>
    (Array.isArray(m?.content) ? m.content : []).forEach((b, j) => {
      for (const kind of ['toolUse', 'toolResult'] as const) {
        const id = (b?.[kind] as { toolUseId?: unknown } | undefined)?.toolUseId;
        if (typeof id !== 'string') continue;
        const at = `Value at 'messages.${i + 1}.member.content.${j + 1}.member.${kind}.toolUseId' failed to satisfy constraint: Member must`;
        if (id.length > 64) found.push(`${at} have length less than or equal to 64`);
        if (id.length < 1) found.push(`${at} have length greater than or equal to 1`);
        if (!/^[a-zA-Z0-9_-]*$/.test(id)) found.push(`${at} satisfy regular expression pattern: [a-zA-Z0-9_-]+`);
      }
    }),
  );
  if (!found.length) return undefined;
  return `${found.length} validation error${found.length > 1 ? 's' : ''} detected: ${found.join('; ')}`;
}

/**
 * Bedrock Runtime Converse (`POST /model/{modelId}/converse`) and ConverseStream
 * (`/converse-stream`, AWS event-stream framing), paced and broken by the knobs.
 */
export function bedrockRoutes(knobs: KnobStore, log: RequestLog): Router {
  const r = Router();
  r.post(/^\/model\/([^/]+)\/(converse|converse-stream)$/, async (req: Request, res: Response) => {
    const model = decodeURIComponent((req.params as Record<string, string>)[0]);
    const streamed = (req.params as Record<string, string>)[1] === 'converse-stream';
    const entry = log.record(req, res);
    entry.model = model;
    const auth = req.headers.authorization ?? '';
    if (!/^(Bearer \S+|AWS4-HMAC-SHA256 Credential=\S+\/bedrock\/aws4_request, SignedHeaders=\S+, Signature=[0-9a-f]{64})$/.test(auth)) {
      return awsError(res, 403, 'AccessDeniedException', 'Missing or malformed authentication.');
    }
    const body = req.body as { messages?: Msg[]; system?: Block[]; inferenceConfig?: { maxTokens?: number; stopSequences?: string[] }; toolConfig?: { tools?: Array<{ toolSpec?: { name?: string } }>; toolChoice?: { any?: unknown; tool?: { name?: string } } }; additionalModelRequestFields?: { thinking?: { type?: string } }; additionalModelResponseFieldPaths?: string[] };
    if (!Array.isArray(body.messages) || !body.messages.length) return awsError(res, 400, 'ValidationException', 'messages: must not be empty');
    const badIds = toolUseIdErrors(body.messages);
    if (badIds) return awsError(res, 400, 'ValidationException', badIds);
    const k = knobs.take(model);
    const { status, ...rest } = k;
    if (await applyFaults(rest, res)) return;
    if (status && status >= 400) {
      if (k.retryAfter !== undefined) res.setHeader('Retry-After', String(k.retryAfter));
      return awsError(res, status, ERROR_TYPES[status] ?? 'InternalServerException', `simulated status ${status}`);
    }
    const messages = body.messages;
    const system = body.system ?? [];
    const lastUser = messageText([...messages].reverse().find((m) => m.role === 'user')?.content ?? []);
    const maxTokens = body.inferenceConfig?.maxTokens ?? 4096;
    const names = (body.toolConfig?.tools ?? []).map((t) => t.toolSpec?.name).filter((n): n is string => !!n);
    const choice = body.toolConfig?.toolChoice;
    const tool = !names.length ? undefined : choice?.tool?.name ?? (choice?.any || /\b(use|call) (a |the )?tool\b/i.test(lastUser) ? names[0] : undefined);
    let words = k.replyWords ?? replyWords(lastUser, k.outputWords ?? 12, maxTokens);
    let stopReason = tool ? 'tool_use' : words.length >= maxTokens ? 'max_tokens' : 'end_turn';
    const cut = tool ? -1 : words.findIndex((w) => (body.inferenceConfig?.stopSequences ?? []).includes(w));
    const replyStop = cut >= 0 ? words[cut] : undefined;
    if (cut >= 0) {
      stopReason = 'stop_sequence';
      words = words.slice(0, cut);
    }
    // Claude's matched stop sequence, returned when its path is asked for (other models have no such field: ignored, as Converse ignores it)
    const claudeModel = /(^|[.:/])anthropic\.claude/.test(model);
    const extraFields = cut >= 0 && claudeModel && body.additionalModelResponseFieldPaths?.includes('/stop_sequence') ? { additionalModelResponseFields: { stop_sequence: replyStop } } : {};
    const reasoning = body.additionalModelRequestFields?.thinking?.type === 'enabled' ? `Considering: ${lastUser.slice(0, 80)}` : undefined;
    const text = tool ? '' : words.join(' ');
    const input = tool ? { query: lastUser.slice(0, 100) } : undefined;
    const toolUseId = `tooluse_sim${crypto.randomBytes(8).toString('hex')}`;
    const cache = cacheUsage(system, messages);
    const prompt = [...system.map((b) => b.text ?? ''), ...messages.map((m) => messageText(m.content))].join('\n');
    const inputTokens = Math.max(1, countTokens(prompt) + 3 * messages.length - cache.read - cache.write);
    const outputTokens = (tool ? countTokens(JSON.stringify(input)) + 5 : countTokens(text)) + (reasoning ? countTokens(reasoning) : 0);
    const usage = { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens + cache.read + cache.write, ...(cache.read || cache.write ? { cacheReadInputTokens: cache.read, cacheWriteInputTokens: cache.write } : {}) };
    const content: Block[] = [];
    if (reasoning) content.push({ reasoningContent: { reasoningText: { text: reasoning, signature: 'sim-signature' } } });
    if (text) content.push({ text });
    if (tool) content.push({ toolUse: { toolUseId, name: tool, input } });
    res.setHeader('x-amzn-RequestId', crypto.randomUUID());

    if (!streamed) {
      res.json({ output: { message: { role: 'assistant', content } }, stopReason, ...extraFields, usage, metrics: { latencyMs: 5 } });
      return;
    }
    res.status(200).setHeader('Content-Type', 'application/vnd.amazon.eventstream');
    res.flushHeaders();
    const frames: Uint8Array[] = [eventFrame('messageStart', { role: 'assistant' })];
    content.forEach((b, contentBlockIndex) => {
      if (b.reasoningContent) {
        frames.push(eventFrame('contentBlockDelta', { contentBlockIndex, delta: { reasoningContent: { text: reasoning } } }));
        frames.push(eventFrame('contentBlockDelta', { contentBlockIndex, delta: { reasoningContent: { signature: 'sim-signature' } } }));
      } else if (b.text) {
        words.forEach((w, i) => frames.push(eventFrame('contentBlockDelta', { contentBlockIndex, delta: { text: i === 0 ? w : ` ${w}` } })));
      } else {
        frames.push(eventFrame('contentBlockStart', { contentBlockIndex, start: { toolUse: { toolUseId, name: tool } } }));
        const json = JSON.stringify(input);
        for (let i = 0; i < json.length; i += 8) frames.push(eventFrame('contentBlockDelta', { contentBlockIndex, delta: { toolUse: { input: json.slice(i, i + 8) } } }));
      }
      frames.push(eventFrame('contentBlockStop', { contentBlockIndex }));
    });
    frames.push(eventFrame('messageStop', { stopReason, ...extraFields }));
    frames.push(eventFrame('metadata', { usage, metrics: { latencyMs: 5 } }));
    for (let i = 0; i < frames.length; i++) {
      if (res.destroyed) return;
      if (k.dropAfterChunks !== undefined && i >= k.dropAfterChunks) {
        await sleep(20); // let what was written reach the client, then cut the connection
        res.socket?.destroy();
        return;
      }
      res.write(frames[i]);
      if (k.tokenDelayMs) await sleep(k.tokenDelayMs);
    }
    res.end();
  });
  return r;
}
