import { chatUsage, finishReason, splitParts, toolCall, type GeminiResponse, type GeminiUsage } from './from-gemini';
import { callId } from './call-ids';

/**
 * Gemini stream chunks (each a whole GenerateContentResponse holding the next parts) → canonical
 * chat chunks. A function call arrives whole, so it becomes one tool-call delta with its arguments;
 * thought parts become `reasoning_content`. usageMetadata is cumulative: the last one counts.
 */
export class GeminiToChatStream {
  private readonly id = `chatcmpl-${callId().slice(5)}`;
  private readonly created = Math.floor(Date.now() / 1000);
  private started = false;
  private tools = 0;
  private usage: GeminiUsage | undefined;

  constructor(private readonly publicModel: string) {}

  private chunk(delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.publicModel, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] };
  }

  push(r: GeminiResponse): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [];
    if (!this.started) {
      this.started = true;
      out.push(this.chunk({ role: 'assistant', content: '' }));
    }
    if (r.usageMetadata) this.usage = r.usageMetadata;
    const cand = r.candidates?.[0];
    for (const p of cand?.content?.parts ?? []) {
      const { text, reasoning, calls } = splitParts([p]);
      if (reasoning) out.push(this.chunk({ reasoning_content: reasoning }));
      if (text) out.push(this.chunk({ content: text }));
      for (const c of calls) out.push(this.chunk({ tool_calls: [{ index: this.tools++, ...toolCall(c) }] }));
    }
    const blocked = !cand && !!r.promptFeedback?.blockReason;
    if (cand?.finishReason || blocked) out.push(this.chunk({}, finishReason(cand?.finishReason, this.tools > 0, blocked)));
    return out;
  }

  usageChunk(): Record<string, unknown> {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.publicModel, choices: [], usage: this.usageTotals() };
  }

  usageTotals() {
    return chatUsage(this.usage);
  }
}
