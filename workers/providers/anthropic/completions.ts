import { chatComplete as anthropicChat } from './chatComplete';
import type { Emit, UpstreamCall } from '../types';
import type { ChatOutcome } from '../openai/chatComplete';

/** OpenAI's documented default for legacy completions (chat has none; Anthropic requires one). */
const LEGACY_DEFAULT_MAX_TOKENS = 16;

type ChatAdapter = (call: UpstreamCall, body: Record<string, unknown>, publicModel: string, stream: { emit: Emit; includeUsage: boolean } | undefined) => Promise<ChatOutcome>;

type Chunk = { id?: string; created?: number; system_fingerprint?: string; choices?: Array<{ index?: number; delta?: { content?: string | null }; finish_reason?: string | null }>; usage?: unknown };

/**
 * The fields of OpenAI's CreateCompletionRequest carried into the chat body as they are, each then
 * taken, refused or left unsent by the kind's chat adapter as for a chat request (Gemini maps the
 * penalties and `seed`; Bedrock refuses non-zero penalties; Anthropic sends neither, as in chat).
 */
const CARRIED = ['temperature', 'top_p', 'stop', 'user', 'frequency_penalty', 'presence_penalty', 'seed'] as const;

/** A legacy completions body → the canonical chat body: the prompt is one user turn. */
export function completionsToChat(body: Record<string, unknown>): Record<string, unknown> {
  const prompt = Array.isArray(body.prompt) ? String(body.prompt[0] ?? '') : String(body.prompt ?? '');
  const chat: Record<string, unknown> = { messages: [{ role: 'user', content: prompt }], max_tokens: body.max_tokens ?? LEGACY_DEFAULT_MAX_TOKENS };
  for (const k of CARRIED) if (body[k] !== undefined && body[k] !== null) chat[k] = body[k];
  if (typeof chat.stop === 'string') chat.stop = [chat.stop];
  return chat;
}

function completionId(chatId: unknown): string {
  return `cmpl-${String(chatId ?? '').replace(/^chatcmpl-/, '')}`;
}

/** A canonical chat completion → OpenAI's `text_completion` object, with the chat answer's `system_fingerprint` (CreateCompletionResponse types it a string too). */
export function chatToCompletion(c: Record<string, unknown>): Record<string, unknown> {
  const choice = (c.choices as Array<{ message?: { content?: string | null }; finish_reason?: string | null }>)[0];
  return {
    id: completionId(c.id),
    object: 'text_completion',
    created: c.created,
    model: c.model,
    system_fingerprint: c.system_fingerprint,
    choices: [{ index: 0, text: choice?.message?.content ?? '', logprobs: null, finish_reason: choice?.finish_reason ?? 'stop' }],
    usage: c.usage,
  };
}

/**
 * Legacy completions on an upstream that is not OpenAI-compatible (Anthropic by default, or the
 * kind's own `chatComplete`), through the canonical translation: the prompt
 * becomes a user turn, the answer (JSON or chunks) comes back as `text_completion` objects.
 */
export async function completions(
  call: UpstreamCall,
  body: Record<string, unknown>,
  publicModel: string,
  stream: { emit: Emit; includeUsage: boolean } | undefined,
  /** The kind's canonical chat adapter (Gemini's reuses this translation). */
  chatComplete: ChatAdapter = anthropicChat,
): Promise<ChatOutcome> {
  const chat = completionsToChat(body);
  if (!stream) {
    const out = await chatComplete(call, chat, publicModel, undefined);
    return { ...out, response: out.response && chatToCompletion(out.response) };
  }
  const emit: Emit = (data) => {
    const c = JSON.parse(data) as Chunk;
    const base = { id: completionId(c.id), object: 'text_completion', created: c.created, model: publicModel, system_fingerprint: c.system_fingerprint };
    if (!c.choices?.length) {
      stream.emit(JSON.stringify({ ...base, choices: [], usage: c.usage }));
      return;
    }
    const ch = c.choices[0];
    const text = ch.delta?.content ?? '';
    if (!text && !ch.finish_reason) return; // role-only and tool/thinking deltas have no legacy form
    stream.emit(JSON.stringify({ ...base, choices: [{ index: 0, text, logprobs: null, finish_reason: ch.finish_reason ?? null }] }));
  };
  return chatComplete(call, chat, publicModel, { emit, includeUsage: stream.includeUsage });
}
