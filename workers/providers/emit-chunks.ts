import type { Emit } from './types';

/** A translated stream's destination: where its chunks go, and whether the caller asked for usage. */
type ChunkStream = { emit: Emit; includeUsage: boolean };

/**
 * Sends a translated upstream's chat chunks on (Anthropic, Bedrock, Gemini), each with the answer's
 * `system_fingerprint` (fingerprint.ts; OpenAI's chunks carry it on every one). When the caller asked
 * for `stream_options.include_usage`, each carries `usage: null`, as OpenAI's do: "All other chunks
 * will also include a `usage` field, but with a null value" (its API reference); the usage-only
 * chunk that ends the stream has the counts (emitUsageChunk).
 */
export function emitChunks(stream: ChunkStream, chunks: Record<string, unknown>[], fingerprint: string): void {
  for (const c of chunks) {
    c.system_fingerprint = fingerprint;
    if (stream.includeUsage) c.usage = null;
    stream.emit(JSON.stringify(c));
  }
}

/** The usage-only chunk that ends a translated stream, with its fingerprint, when the caller asked for usage. */
export function emitUsageChunk(stream: ChunkStream, chunk: Record<string, unknown>, fingerprint: string): void {
  if (!stream.includeUsage) return;
  chunk.system_fingerprint = fingerprint;
  stream.emit(JSON.stringify(chunk));
}
