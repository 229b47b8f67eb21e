import crypto from 'crypto';
import type { Received, Reply } from './scripted-upstream';

export type Block = Record<string, unknown> & { type: string };
export type Message = { role: string; content: string | Block[] };

/** A signature the scripted upstream can check: bound to the block's thinking text, as Anthropic's is (and to the model that made it, when one is named: model-bound-thinking.ts). */
export const signatureOf = (thinking: string, model = '') => `sig-${crypto.createHash('sha256').update(model + thinking).digest('base64url').slice(0, 16)}`;
export const thinking = (text: string, model = ''): Block => ({ type: 'thinking', thinking: text, signature: signatureOf(text, model) });
export const REDACTED = { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' };

/** Anthropic's 400 `invalid_request_error` envelope. */
const refusal = (message: string): Reply => ({ kind: 'json', status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message } } });

/**
 * What the real Messages API refuses in a request with thinking on (`on`): a thinking block whose
 * signature does not match it (a modified block, or one `model` did not sign), and a final assistant turn whose tool_use blocks
 * (answered by the last user turn's tool_result) do not come after a thinking block. Undefined when
 * the request is acceptable.
 */
export function thinkingRefusal(body: { messages: Message[] }, on: boolean, model = ''): Reply | undefined {
  const blocks = (m: Message): Block[] => (typeof m.content === 'string' ? [] : m.content);
  for (const [i, m] of body.messages.entries()) {
    for (const [j, b] of blocks(m).entries()) {
      if (b.type === 'thinking' && b.signature !== signatureOf(String(b.thinking), model)) return refusal(`messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`);
    }
  }
  if (!on) return undefined;
  const last = body.messages.at(-1);
  const prev = body.messages.at(-2);
  if (!last || !prev || prev.role !== 'assistant' || !blocks(last).some((b) => b.type === 'tool_result')) return undefined;
  const first = blocks(prev)[0];
  if (first?.type === 'thinking' || first?.type === 'redacted_thinking') return undefined;
  return refusal(
    `messages.${body.messages.length - 2}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first?.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`.`,
  );
}

export type Turn = { think: Block[]; then: Block[]; stop: string };
/** Whether a Messages request asks for thinking: `thinking.type` enabled or adaptive. */
export const thinkingOn = (b: Record<string, unknown>) => ['enabled', 'adaptive'].includes(String((b.thinking as { type?: unknown } | undefined)?.type));

const message = (content: Block[], stop_reason: string) => ({ id: `msg_${crypto.randomBytes(6).toString('hex')}`, type: 'message', role: 'assistant', model: 'up-model', content, stop_reason, stop_sequence: null, usage: { input_tokens: 20, output_tokens: 10 } });

/** A Message as Anthropic streams it: each block's start, deltas (a thinking block's signature last) and stop. */
export function messageEvents(m: ReturnType<typeof message>): unknown[] {
  const events: unknown[] = [{ type: 'message_start', message: { ...m, content: [], stop_reason: null, usage: { input_tokens: 20, output_tokens: 1 } } }];
  m.content.forEach((b, index) => {
    if (b.type === 'thinking') {
      events.push({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      const text = String(b.thinking);
      const half = Math.ceil(text.length / 2);
      for (const piece of [text.slice(0, half), text.slice(half)]) if (piece) events.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: piece } });
      events.push({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: b.signature } });
    } else if (b.type === 'tool_use') {
      events.push({ type: 'content_block_start', index, content_block: { ...b, input: {} } });
      events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } });
    } else if (b.type === 'text') {
      events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text } });
    } else events.push({ type: 'content_block_start', index, content_block: b });
    events.push({ type: 'content_block_stop', index });
  });
  events.push({ type: 'message_delta', delta: { stop_reason: m.stop_reason, stop_sequence: null }, usage: { output_tokens: 10 } });
  events.push({ type: 'message_stop' });
  return events;
}

/**
 * A model turn script for a ScriptedUpstream of kind `anthropic` that thinks as the real API does:
 * with thinking on (`isOn` of the request: by default `thinking.type` enabled or adaptive) each turn
 * opens with its signed thinking; a request the API would refuse (thinkingRefusal) gets its 400.
 * Turn `n` (the request's count of assistant turns since the last plain user turn) answers
 * `turns[n]`'s blocks, JSON or streamed as asked.
 */
export function thinkingModel(turns: Turn[], isOn = thinkingOn, model = '') {
  return (req: Received): Reply => {
    const on = isOn(req.body);
    const refused = thinkingRefusal(req.body, on, model);
    if (refused) return refused;
    const msgs = req.body.messages as Message[];
    let n = 0;
    for (let i = msgs.length - 1; i >= 0 && !(msgs[i].role === 'user' && !(typeof msgs[i].content !== 'string' && (msgs[i].content as Block[]).some((b) => b.type === 'tool_result'))); i--) if (msgs[i].role === 'assistant') n++;
    const turn = turns[Math.min(n, turns.length - 1)];
    const m = message([...(on ? turn.think : []), ...turn.then], turn.stop);
    return req.body.stream ? { kind: 'sse', events: messageEvents(m) } : { kind: 'json', body: m };
  };
}
