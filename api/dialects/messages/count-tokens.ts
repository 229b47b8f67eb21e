import { searchResultText, type MessagesBlock, type MessagesMessage, type MessagesRequest } from './request';
import { fromLastCompaction } from './compaction';
import { countTokens } from '../../../shared/tokenizer/pool';
import { DOCUMENT_TOKENS, IMAGE_TOKENS } from '../../../shared/tokenizer/media';
import { PER_MESSAGE_TOKENS as PER_MESSAGE, PER_REQUEST_TOKENS as PER_REQUEST } from '../count-framing';

function blockText(b: MessagesBlock): { text: string; fixed: number } {
  switch (b.type) {
    case 'text':
      return { text: String(b.text ?? ''), fixed: 0 };
    case 'thinking':
      return { text: String(b.thinking ?? ''), fixed: 0 };
    case 'image':
      return { text: '', fixed: IMAGE_TOKENS };
    case 'document': {
      const s = b.source as { type?: string; data?: string } | undefined;
      return s?.type === 'text' ? { text: String(s.data ?? ''), fixed: 0 } : { text: '', fixed: DOCUMENT_TOKENS };
    }
    case 'search_result':
      return { text: searchResultText(b), fixed: 0 };
    case 'tool_use':
      return { text: `${String(b.name)} ${JSON.stringify(b.input ?? {})}`, fixed: 0 };
    case 'tool_result': {
      if (typeof b.content === 'string') return { text: b.content, fixed: 0 };
      const inner = Array.isArray(b.content) ? (b.content as MessagesBlock[]).map(blockText) : [];
      return { text: inner.map((i) => i.text).join('\n'), fixed: inner.reduce((s, i) => s + i.fixed, 0) };
    }
    default:
      return { text: JSON.stringify(b), fixed: 0 };
  }
}

const THINKING = new Set(['thinking', 'redacted_thinking']);
const answersTools = (m: MessagesMessage) => m.role === 'user' && Array.isArray(m.content) && m.content.length > 0 && m.content.every((b) => b.type === 'tool_result');

/**
 * Where the current assistant turn starts: after the last user message that is not only tool
 * results (a tool loop's results continue the turn they answer). Anthropic: "Thinking blocks from
 * previous assistant turns are ignored and do not count toward your input tokens. Current assistant
 * turn thinking does count toward your input tokens" (token-counting, "Counting tokens in messages
 * with extended thinking"; context-windows: previous thinking blocks are "stripped from the context
 * window calculation"). Before, every turn's thinking was counted.
 */
function currentTurnStart(messages: MessagesMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === 'user' && !answersTools(messages[i])) return i + 1;
  return 0;
}

/**
 * Input tokens of a messages request under the model's tokenizer profile: system, every message's
 * text, tool calls and results, the current assistant turn's thinking (currentTurnStart), and tool
 * definitions, plus fixed estimates for images and binary documents and a small per-message framing;
 * from the latest compaction block on. Large inputs are counted off the event loop (pool.ts); `signal`
 * abandons such a count once its answer is no longer wanted.
 */
export async function countMessagesTokens(profile: string, req: MessagesRequest, signal?: AbortSignal): Promise<number> {
  const texts: string[] = [];
  let fixed = PER_REQUEST;
  if (typeof req.system === 'string') texts.push(req.system);
  else if (Array.isArray(req.system)) texts.push(...req.system.map((b) => blockText(b).text));
  // a `compaction` block stands for everything before it, as on the request (compaction.ts)
  const messages = fromLastCompaction(req.messages);
  const current = currentTurnStart(messages);
  for (const [i, m] of messages.entries()) {
    fixed += PER_MESSAGE;
    if (typeof m.content === 'string') texts.push(m.content);
    else
      for (const b of m.content) {
        if (THINKING.has(b.type) && i < current) continue;
        const t = blockText(b);
        texts.push(t.text);
        fixed += t.fixed;
      }
  }
  for (const t of req.tools ?? []) texts.push(JSON.stringify({ name: t.name, description: t.description, input_schema: t.input_schema }));
  return fixed + ((await countTokens(profile, texts, undefined, signal)) as number);
}
