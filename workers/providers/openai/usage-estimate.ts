import { countTokens } from '../../../shared/tokenizer/pool';
import { jsonWithoutMedia } from '../../../shared/tokenizer/media';
import { logger } from '../../../shared/logger';
import type { TokenUsage, UpstreamCall } from '../types';
import { isRecord } from '../../../shared/is-record';

type Obj = Record<string, unknown>;

/** One warning per upstream model a minute, not one per request. */
const WARN_EVERY_MS = 60_000;
const warned = new Map<string, number>();
const obj = (v: unknown): Obj | undefined => (isRecord(v) ? v : undefined);

/** The text an answer's choice carries (content, refusal, reasoning, a tool call's name and arguments, a legacy completion's text). */
function choiceText(choice: unknown, out: string[]): void {
  const c = obj(choice);
  if (!c) return;
  if (typeof c.text === 'string') out.push(c.text);
  const m = obj(c.message) ?? obj(c.delta);
  if (!m) return;
  for (const k of ['content', 'refusal', 'reasoning_content', 'reasoning']) if (typeof m[k] === 'string') out.push(m[k] as string);
  if (Array.isArray(m.tool_calls)) {
    for (const t of m.tool_calls) {
      const f = obj(obj(t)?.function);
      if (typeof f?.name === 'string') out.push(f.name);
      if (typeof f?.arguments === 'string') out.push(f.arguments);
    }
  }
}

/** The generated text of a JSON answer, or of a stream's chunks (each a JSON string as sent on). */
export function answerTexts(answers: unknown[]): string[] {
  const out: string[] = [];
  for (const a of answers) {
    let v = a;
    if (typeof a === 'string') {
      try {
        v = JSON.parse(a);
      } catch {
        continue;
      }
    }
    const choices = obj(v)?.choices;
    if (Array.isArray(choices)) for (const c of choices) choiceText(c, out);
  }
  return out;
}

/**
 * The usage of a call whose upstream reported none (an OpenAI-compatible server that ignores
 * `stream_options.include_usage`, or leaves `usage` out of its answer): the request's messages (media
 * at their fixed estimate) and the generated text counted with the model's tokenizer (`call.tokenizer`,
 * the default one for a job that carries none), so the request is billed by an estimate instead of
 * nothing (docs/providers.md). A count that cannot finish falls back to four characters a token.
 */
export async function estimateUsage(body: Obj, answers: unknown[], call: Pick<UpstreamCall, 'upstreamModel' | 'tokenizer'>): Promise<TokenUsage> {
  const { json, fixedTokens } = jsonWithoutMedia(body.messages ?? body.prompt ?? '');
  const output = answerTexts(answers).join('');
  const count = async (text: string) => {
    const n = await countTokens(call.tokenizer, [text]).catch(() => false as const);
    return n === false ? Math.ceil(text.length / 4) : n;
  };
  const [inputTokens, outputTokens] = await Promise.all([count(json), count(output)]);
  const now = Date.now();
  if (now - (warned.get(call.upstreamModel) ?? 0) > WARN_EVERY_MS) {
    warned.set(call.upstreamModel, now);
    logger.warn({ upstreamModel: call.upstreamModel }, 'upstream reported no usage: billed by an estimate');
  }
  return { inputTokens: inputTokens + fixedTokens, outputTokens };
}

/** A usage as OpenAI's answers and usage chunks report it. */
export function openaiUsage(u: TokenUsage): { prompt_tokens: number; completion_tokens: number; total_tokens: number } {
  return { prompt_tokens: u.inputTokens, completion_tokens: u.outputTokens, total_tokens: u.inputTokens + u.outputTokens };
}

/** The `id` and `created` of a stream's chunks (its first chunk sent on), for a usage chunk the gateway adds. */
export function streamFrame(emitted: string[]): { id?: unknown; created?: unknown } {
  try {
    const c = emitted.length ? obj(JSON.parse(emitted[0])) : undefined;
    return { id: c?.id, created: c?.created };
  } catch {
    return {}; // a chunk passed on unparsed (chunk-rewrite.ts) that is not JSON after all
  }
}
