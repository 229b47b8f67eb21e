import type { Emit } from './types';

/**
 * Sends a translated upstream's chat chunks on (Anthropic, Bedrock, Gemini). When the caller asked
 * for `stream_options.include_usage`, each carries `usage: null`, as OpenAI's do: "All other chunks
 * will also include a `usage` field, but with a null value" (its API reference); the usage-only
 * chunk that ends the stream has the counts.
 */
export function emitChunks(stream: { emit: Emit; includeUsage: boolean }, chunks: Record<string, unknown>[]): void {
  for (const c of chunks) {
    if (stream.includeUsage) c.usage = null;
    stream.emit(JSON.stringify(c));
  }
}
