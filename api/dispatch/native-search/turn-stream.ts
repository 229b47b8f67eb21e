import type { CanonicalChunk, CanonicalCompletion, CanonicalToolCall, CanonicalUsage, FinishReason, ThinkingBlock } from '../../dialects/canonical';

/**
 * One streamed model turn of the native loop: hands each text and reasoning delta on as it arrives
 * (the client sees the answer token by token), and each signed thinking block once whole, and
 * assembles the turn's completion (reasoning, its signed blocks, text, tool calls, finish reason, usage) for the loop, as the non-streamed turn would have returned it.
 */
export class TurnCollector {
  private text = '';
  /** The model's refusal (OpenAI's `delta.refusal`), and an Anthropic deployment's `stop_details` on the finishing choice. */
  private refusal = '';
  private stopDetails: unknown;
  private reasoning = '';
  private readonly thinking: ThinkingBlock[] = [];
  private readonly calls: CanonicalToolCall[] = [];
  private finish: FinishReason = null;
  private usage: CanonicalUsage | undefined;

  constructor(
    private readonly onText: (delta: string) => void,
    private readonly onReasoning?: (delta: string) => void,
    private readonly onThinking?: (blocks: ThinkingBlock[]) => void,
  ) {}

  push(data: string): void {
    const chunk = JSON.parse(data) as CanonicalChunk;
    if (chunk.usage) this.usage = chunk.usage;
    for (const choice of chunk.choices ?? []) {
      const d = choice.delta;
      if (d?.reasoning_content) {
        this.reasoning += d.reasoning_content;
        this.onReasoning?.(d.reasoning_content);
      }
      if (d?.thinking_blocks?.length) {
        this.thinking.push(...d.thinking_blocks);
        this.onThinking?.(d.thinking_blocks);
      }
      if (d?.content) {
        this.text += d.content;
        this.onText(d.content);
      }
      for (const tc of d?.tool_calls ?? []) {
        const call = (this.calls[tc.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
        if (tc.id) call.id = tc.id;
        if (tc.function?.name) call.function.name += tc.function.name;
        if (tc.function?.arguments) call.function.arguments += tc.function.arguments;
      }
      if (d?.refusal) this.refusal += d.refusal;
      if (choice.finish_reason) {
        this.finish = choice.finish_reason;
        this.stopDetails = (choice as { stop_details?: unknown }).stop_details;
      }
    }
  }

  completion(): CanonicalCompletion {
    const calls = this.calls.filter(Boolean);
    const message = { role: 'assistant', content: this.text || null, ...(this.refusal ? { refusal: this.refusal } : {}), ...(this.reasoning ? { reasoning_content: this.reasoning } : {}), ...(this.thinking.length ? { thinking_blocks: this.thinking } : {}), ...(calls.length ? { tool_calls: calls } : {}) };
    const details = this.stopDetails === undefined ? {} : { stop_details: this.stopDetails };
    return { choices: [{ index: 0, message, finish_reason: this.finish ?? (calls.length ? 'tool_calls' : 'stop'), ...details }], usage: this.usage } as CanonicalCompletion;
  }
}
