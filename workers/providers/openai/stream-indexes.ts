import { isRecord } from '../../../shared/is-record';

/** A choice's tool calls so far: the index of its last one, the next free one, the numbers given, and each upstream index's current number and id. */
type ChoiceCalls = { last: number; next: number; used: Set<number>; byUpstream: Map<number, { index: number; id: string | undefined }> };

/**
 * OpenAI numbers every choice of a streamed chat chunk (`index`) and every tool call in a delta
 * (`index`: the same call across its chunks, its `id` and name in the first). Some OpenAI-compatible
 * servers leave them out (they send each call whole, with its id, and no index); the official SDK's
 * stream helper (openai 7's ChatCompletionStream) refuses such a chunk, and a call without its index
 * cannot be told from the next. Others (Gemini behind OpenAI-compatible proxies) send parallel calls
 * all on index 0, each with its own id, which a client merges into one call (its arguments two JSON
 * texts end to end). StreamIndexes numbers them as OpenAI would: a choice by its place in `choices`;
 * a tool call with an `id` as its choice's next call, one without as the rest of the choice's last
 * call; a call with a new id on an index already taken as the next call, and the deltas after it on
 * that index as its own. Indexes the upstream gave are otherwise kept (and counted, so a later
 * unnumbered call does not take one of theirs).
 */
export class StreamIndexes {
  private calls = new Map<number, ChoiceCalls>();

  /** Numbers `chunk`'s choices and tool calls in place. */
  apply(chunk: Record<string, unknown>): void {
    const choices = chunk.choices;
    if (!Array.isArray(choices)) return;
    choices.forEach((c: unknown, i) => {
      if (!isRecord(c)) return;
      if (!Number.isInteger(c.index)) c.index = i;
      const calls = isRecord(c.delta) ? c.delta.tool_calls : undefined;
      if (!Array.isArray(calls)) return;
      const seen = this.calls.get(c.index as number) ?? { last: -1, next: 0, used: new Set<number>(), byUpstream: new Map() };
      for (const call of calls) {
        if (!isRecord(call)) continue;
        const id = typeof call.id === 'string' && call.id ? call.id : undefined;
        if (!Number.isInteger(call.index)) call.index = id !== undefined || seen.last < 0 ? seen.next : seen.last;
        else {
          const upstream = call.index as number;
          const at = seen.byUpstream.get(upstream);
          // a new call on an index taken by another (its own id): the choice's next number
          const index = !at ? (seen.used.has(upstream) ? seen.next : upstream) : id !== undefined && at.id !== undefined && id !== at.id ? seen.next : at.index;
          seen.byUpstream.set(upstream, { index, id: id ?? at?.id });
          call.index = index;
        }
        seen.last = call.index as number;
        seen.used.add(seen.last);
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
