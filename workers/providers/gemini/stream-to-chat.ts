import { candidateIndex, chatUsage, finishReason, splitParts, toolCall, type GeminiCandidate, type GeminiResponse, type GeminiUsage } from './from-gemini';
import { callId } from './call-ids';
import { chatLogprobs, type LogprobsAsk } from './logprobs';
import { OpeningChunks } from '../opening-chunks';

/** What a streamed choice has sent so far: its tool calls. */
type ChoiceState = { tools: number };

/**
 * Gemini stream chunks (each a whole GenerateContentResponse holding the next parts of each
 * candidate) → canonical chat chunks, each candidate (`candidateCount`) the choice at its index. A
 * function call arrives whole, so it becomes one tool-call delta with its arguments (numbered within
 * its choice); thought parts become `reasoning_content`; a candidate's `logprobsResult` (its tokens
 * in this chunk) rides on its first text chunk. Each choice's role chunk comes with its first output
 * (opening-chunks.ts). usageMetadata is cumulative: the last one counts.
 */
export class GeminiToChatStream {
  private readonly id = `chatcmpl-${callId().slice(5)}`;
  private readonly created = Math.floor(Date.now() / 1000);
  private readonly choices = new Map<number, ChoiceState>();
  private usage: GeminiUsage | undefined;
  private readonly opening = new OpeningChunks();

  constructor(
    private readonly publicModel: string,
    private readonly ask?: LogprobsAsk,
  ) {}

  private chunk(index: number, delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.publicModel, choices: [{ index, delta, logprobs: null, finish_reason: finish }] };
  }

  private state(index: number): ChoiceState {
    let s = this.choices.get(index);
    if (!s) this.choices.set(index, (s = { tools: 0 }));
    return s;
  }

  private candidate(c: GeminiCandidate | undefined, index: number, blocked: boolean): Record<string, unknown>[] {
    const s = this.state(index);
    const out: Record<string, unknown>[] = [];
    for (const p of c?.content?.parts ?? []) {
      const { text, reasoning, calls } = splitParts([p]);
      if (reasoning) out.push(this.chunk(index, { reasoning_content: reasoning }));
      if (text) out.push(this.chunk(index, { content: text }));
      for (const call of calls) out.push(this.chunk(index, { tool_calls: [{ index: s.tools++, ...toolCall(call) }] }));
    }
    if (c?.finishReason || blocked) out.push(this.chunk(index, {}, finishReason(c?.finishReason, s.tools > 0, blocked)));
    const logprobs = c?.logprobsResult && chatLogprobs(c.logprobsResult, this.ask);
    // an event without tokens (a thought, a result of none) leaves its chunks' logprobs null, as OpenAI's chunks without content tokens are
    if (logprobs?.content.length) {
      // on the event's first text delta, whose tokens they are (OpenAI sends a content token's logprobs with its delta;
      // the Responses API reads them off output_text deltas only), not on a thought part's reasoning delta before it
      let at = out.findIndex((o) => typeof (o.choices as Array<{ delta: { content?: unknown } }>)[0].delta.content === 'string');
      if (at < 0) at = out.length ? 0 : out.push(this.chunk(index, {})) - 1;
      (out[at] as { choices: Array<Record<string, unknown>> }).choices[0].logprobs = logprobs;
    }
    return out;
  }

  push(r: GeminiResponse): Record<string, unknown>[] {
    if (r.usageMetadata) this.usage = r.usageMetadata;
    const cands = r.candidates ?? [];
    if (!cands.length) return this.opening.apply(this.candidate(undefined, 0, !!r.promptFeedback?.blockReason));
    return this.opening.apply(cands.flatMap((c, at) => this.candidate(c, candidateIndex(c, at), false)));
  }

  usageChunk(): Record<string, unknown> {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.publicModel, choices: [], usage: this.usageTotals() };
  }

  usageTotals() {
    return chatUsage(this.usage);
  }
}
