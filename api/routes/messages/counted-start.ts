import { countMessagesTokens } from '../../dialects/messages/count-tokens';
import type { MessagesRequest } from '../../dialects/messages/request';
import type { MessagesEvent } from '../../dialects/messages/stream';

/**
 * The input of a request as `count_tokens` counts it (the model's tokenizer profile), less what
 * context editing cleared (`freed`), the way `count_tokens` reports an edited request; undefined
 * when it cannot be counted (a busy pod's time budget, a full counting pool): never a failed request.
 */
export async function inputEstimate(tokenizer: string, body: MessagesRequest, freed = 0, signal?: AbortSignal): Promise<number | undefined> {
  try {
    return Math.max(0, (await countMessagesTokens(tokenizer, body, signal)) - freed);
  } catch {
    return undefined;
  }
}

/** The longest the first events wait for the count; past it they go out with message_start's input at 0, as before. */
const MAX_HOLD_MS = 500;

/**
 * A translated stream's `message_start` with `usage.input_tokens` filled in. Anthropic's
 * message_start carries the request's input tokens (its streaming document's example:
 * `"usage": {"input_tokens": 25, "output_tokens": 1}`); a translated upstream reports its usage only
 * at the end, so a client that takes the input count from message_start (and only the output from
 * `message_delta`, as Anthropic's examples suggest) read 0 input tokens for every streamed answer.
 * The request is counted while the upstream starts (`estimate`); the events are held until the count
 * is known (it almost always is before the first chunk), at most MAX_HOLD_MS from the first one, then
 * sent in order. `message_delta` still carries the upstream's own count, which the official SDK and
 * Claude Code take as the total. `count` is handed a signal that aborts when the events go out
 * without it (the hold's bound passed, or the stream ended first): a large prompt's count on the
 * tokenizer pool is then abandoned, its thread freed, rather than run on to TOKEN_COUNT_TIMEOUT_MS
 * for an answer no one reads.
 */
export class CountedStart {
  private held: MessagesEvent[] | undefined = [];
  private input: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private released!: () => void;
  private readonly flushed = new Promise<void>((resolve) => (this.released = resolve));
  private readonly abandon = new AbortController();
  private counted = false;

  constructor(
    count: (signal: AbortSignal) => Promise<number | undefined>,
    private readonly send: (ev: MessagesEvent) => void,
    private readonly maxHoldMs = MAX_HOLD_MS,
  ) {
    void count(this.abandon.signal).then((n) => {
      this.counted = true;
      this.input = n;
      this.flush();
    });
  }

  push(events: MessagesEvent[]): void {
    for (const ev of events) {
      if (!this.held) this.out(ev);
      else {
        this.held.push(ev);
        this.timer ??= setTimeout(() => this.flush(), this.maxHoldMs);
      }
    }
  }

  /**
   * Before the closing events, or the error event of a failure: what is held goes out first (once
   * the count is known, within MAX_HOLD_MS of the first held event); with nothing held, at once.
   */
  settle(): Promise<void> {
    if (!this.held?.length) this.flush();
    return this.flushed;
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    // out without the count: nothing will read it any more
    if (!this.counted) this.abandon.abort();
    const held = this.held;
    this.held = undefined;
    for (const ev of held ?? []) this.out(ev);
    this.released();
  }

  private out(ev: MessagesEvent): void {
    const usage = ev.type === 'message_start' ? (ev.message as { usage?: { input_tokens?: number } } | undefined)?.usage : undefined;
    if (usage && !usage.input_tokens && this.input !== undefined) usage.input_tokens = this.input;
    this.send(ev);
  }
}
