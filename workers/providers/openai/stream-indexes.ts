import { isRecord } from '../../../shared/is-record';

/**
 * OpenAI numbers every choice of a streamed chat chunk (`index`) and every tool call in a delta
 * (`index`: the same call across its chunks, its `id` and name in the first). Some OpenAI-compatible
 * servers leave them out (they send each call whole, with its id, and no index); the official SDK's
 * stream helper (openai 7's ChatCompletionStream) refuses such a chunk, and a call without its index
 * cannot be told from the next. StreamIndexes numbers what is missing as OpenAI would: a choice by its
 * place in `choices`; a tool call with an `id` as its choice's next call, one without as the rest of
 * the choice's last call. Indexes the upstream gave are kept (and counted, so a later unnumbered call
 * does not take one of theirs).
 */
export class StreamIndexes {
  /** Per choice: the index of its last tool call, and the next free one. */
  private calls = new Map<number, { last: number; next: number }>();

  /** Numbers `chunk`'s choices and tool calls in place. */
  apply(chunk: Record<string, unknown>): void {
    const choices = chunk.choices;
    if (!Array.isArray(choices)) return;
    choices.forEach((c: unknown, i) => {
      if (!isRecord(c)) return;
      if (!Number.isInteger(c.index)) c.index = i;
      const calls = isRecord(c.delta) ? c.delta.tool_calls : undefined;
      if (!Array.isArray(calls)) return;
      const seen = this.calls.get(c.index as number) ?? { last: -1, next: 0 };
      for (const call of calls) {
        if (!isRecord(call)) continue;
        if (!Number.isInteger(call.index)) call.index = call.id !== undefined || seen.last < 0 ? seen.next : seen.last;
        seen.last = call.index as number;
        seen.next = Math.max(seen.next, seen.last + 1);
      }
      this.calls.set(c.index as number, seen);
    });
  }
}

/** A JSON answer's choices without an `index` get their place in `choices`, as OpenAI numbers them. */
export function indexChoices(answer: Record<string, unknown>): void {
  const choices = answer.choices;
  if (Array.isArray(choices)) choices.forEach((c: unknown, i) => isRecord(c) && !Number.isInteger(c.index) && (c.index = i));
}
