import type { Received, Reply } from './scripted-upstream';
import { signatureOf, thinkingModel, thinkingRefusal, type Block, type Message, type Turn } from './thinking-upstream';

/** A redacted thinking block `model` made (its opaque data names the model, as a signature does). */
export const redactedBy = (model: string): Block => ({ type: 'redacted_thinking', data: `${Buffer.from(model).toString('base64')}EmwKAhgBEgy3va3pzix` });

/** A model that thinks unless `thinking` is disabled (adaptive by default, as Claude Sonnet 5 is). */
const thinksByDefault = (b: Record<string, unknown>) => (b.thinking as { type?: unknown } | undefined)?.type !== 'disabled';

/** Not a thinking block, or one `model` made. */
const readable = (b: Block, model: string) => (b.type === 'thinking' ? b.signature === signatureOf(String(b.thinking), model) : b.type !== 'redacted_thinking' || b.data === redactedBy(model).data);

/**
 * thinkingModel for one Claude model, thinking by default, (`model`: its blocks are signed with signatureOf(text, model)),
 * reading the history as Anthropic documents for blocks another model made: "Other models silently
 * ignore them rather than rejecting the request" (adaptive-thinking); "If the current model can't read
 * a block, the API drops it from that request without an error" (preserved-thinking). (A block the
 * model did not sign is taken for another model's: a modified one, which the API refuses, is not
 * told apart here.) A tool loop's final turn left without
 * thinking then has thinking disabled for the request, as the API's "Graceful thinking degradation"
 * does (extended-thinking), instead of the 400. The request as the upstream received it (Received)
 * keeps every block it was sent.
 */
export function modelBoundThinking(model: string, turns: Turn[], isOn = thinksByDefault) {
  const inner = thinkingModel(turns, isOn, model);
  return (req: Received): Reply => {
    const messages = (req.body.messages as Message[]).map((m) => (typeof m.content === 'string' ? m : { ...m, content: m.content.filter((b) => readable(b, model)) }));
    const body = { ...req.body, messages };
    const degraded = isOn(body) && thinkingRefusal(body, true, model) !== undefined;
    return inner({ ...req, body: degraded ? { ...body, thinking: { type: 'disabled' } } : body });
  };
}
