import type { CatalogModel } from '../../../shared/catalog/catalog';
import { instructionsEnd, type CanonicalMessage, type CanonicalRequest } from '../../dialects/canonical';
import { countCanonicalTokens } from '../../dialects/responses/count-tokens';
import { PER_REQUEST_TOKENS } from '../../dialects/count-framing';
import { toolMediaOf } from '../../../workers/providers/tool-results';

/** The user message that carries tool outputs' images and files (`tool_media`): part of its step, not a turn of its own. */
const carriesToolMedia = (m: CanonicalMessage) => toolMediaOf(m).length > 0;

/** The index after the turn that starts at `i`: a user message and everything up to the next user message of the caller's own. */
function turnEnd(msgs: CanonicalMessage[], i: number): number {
  let end = i + 1;
  while (end < msgs.length && (msgs[end].role !== 'user' || carriesToolMedia(msgs[end]))) end++;
  return end;
}

/** The index after the step that starts at `i`: an answer (its tool calls), the tool results after it and their images. */
function stepEnd(msgs: CanonicalMessage[], i: number): number {
  let end = i + 1;
  while (end < msgs.length && (msgs[end].role === 'tool' || carriesToolMedia(msgs[end]))) end++;
  return end;
}

/** Drops msgs[start, end) and takes their tokens off `total`; returns the new total. */
async function drop(canonical: CanonicalRequest, model: CatalogModel, start: number, end: number, total: number): Promise<number> {
  const part = canonical.messages.splice(start, end - start);
  return total - ((await countCanonicalTokens(model.tokenizer, { model: canonical.model, messages: part }, true)) - PER_REQUEST_TOKENS);
}

/**
 * OpenAI's `truncation: "auto"`: when the input (counted with the model's tokenizer profile, as
 * `input_tokens` counts it) and `max_output_tokens` exceed the model's context window, whole turns
 * are dropped from the beginning of the conversation (a user message and the answers, tool calls and
 * tool results after it, so that no tool result loses its call and the conversation still opens with a
 * user message) until it fits; the system and developer messages at its start and the last turn are
 * kept. When the last turn alone is still too long (an agent's single task with a long tool loop
 * after it: Codex's shape), its oldest steps go next (an answer with its tool calls and their
 * results together), keeping its user message and its last step. A model without a context window,
 * or an input that fits, is left as it is; one that still does not fit goes as it is (the upstream
 * refuses it, as with `disabled`). Returns the messages dropped.
 */
export async function truncateToFit(canonical: CanonicalRequest, model: CatalogModel, maxOutput: number | null | undefined): Promise<number> {
  if (!model.contextWindow) return 0;
  const budget = model.contextWindow - (maxOutput ?? 0);
  let total = await countCanonicalTokens(model.tokenizer, canonical, true);
  if (total <= budget) return 0;
  const msgs = canonical.messages;
  let start = instructionsEnd(msgs);
  // the first turn to drop begins at the first user message after the leading instructions
  while (start < msgs.length && msgs[start].role !== 'user') start++;
  const before = msgs.length;
  while (total > budget) {
    const end = turnEnd(msgs, start);
    if (end >= msgs.length) break; // the last turn is kept whole
    total = await drop(canonical, model, start, end, total);
  }
  // then the last turn's oldest steps, after its user message
  const step = start + 1;
  while (total > budget && start < msgs.length) {
    const end = stepEnd(msgs, step);
    if (end >= msgs.length) break; // its last step is kept
    total = await drop(canonical, model, step, end, total);
  }
  return before - msgs.length;
}
