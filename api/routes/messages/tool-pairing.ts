import type Joi from 'joi';

/**
 * Anthropic's refusals of tool calls and tool results that do not pair up (400
 * invalid_request_error, in its words as clients quote them: claude-code issues 1577, 5989, 13460;
 * CLIProxyAPI issue 497): an assistant turn's `tool_use` ids without a `tool_result` in the next
 * turn ("messages.N", N the assistant message's index), and a `tool_result` whose id is no
 * `tool_use` of the turn before ("messages.N.content.M"). Turns are as Anthropic reads them:
 * consecutive messages of one role are one turn (its documentation: they are combined), system
 * messages in `messages` are passed over. Where in the turn the results stand is left to Anthropic
 * (an older wording asked for them "at the beginning"; the gateway combines turns so that results
 * after text still go first to a translated upstream). Only client tools: server tools
 * (`server_tool_use` and their `*_tool_result`) and `mcp_tool_use` are Anthropic's to pair. A final
 * assistant turn (a prefill) is left alone (the evidence does not say what Anthropic does with one
 * calling a tool), and so are results opening a continued `thread` (their calls are held by the
 * server: the SDK's tool runner sends them so).
 */
type Block = { type?: unknown; id?: unknown; tool_use_id?: unknown };
type Turn = { role: string; content: unknown };
type Body = { messages: Turn[]; thread?: unknown };

/** Whether the request continues a server-held `thread` (its tools and open calls are the server's). */
export const continuesThread = (body: { thread?: unknown }): boolean => (body.thread as { type?: unknown } | null | undefined)?.type === 'continue';
/** A turn as Anthropic reads it: the indexes of its consecutive messages of one role. */
type Group = { role: string; at: number[] };

const blocksOf = (t: Turn): Block[] => (Array.isArray(t.content) ? (t.content as Block[]) : []);
const idsOf = (t: Turn, type: string, key: 'id' | 'tool_use_id') => blocksOf(t).filter((b) => b.type === type).map((b) => String(b[key]));

function groups(turns: Turn[]): Group[] {
  const out: Group[] = [];
  turns.forEach((t, i) => {
    if (t.role === 'system') return;
    const last = out.at(-1);
    if (last?.role === t.role) last.at.push(i);
    else out.push({ role: t.role, at: [i] });
  });
  return out;
}

/** The first pairing problem, in the order of the messages, or undefined. */
export function unpairedTool(body: Body): string | undefined {
  const turns = body.messages;
  const all = groups(turns);
  const continued = continuesThread(body);
  for (let g = 0; g < all.length; g++) {
    const { role, at } = all[g];
    if (role === 'user' && !(g === 0 && continued)) {
      const before = all[g - 1];
      const asked = new Set(before?.role === 'assistant' ? before.at.flatMap((i) => idsOf(turns[i], 'tool_use', 'id')) : []);
      for (const i of at) {
        const m = blocksOf(turns[i]).findIndex((b) => b.type === 'tool_result' && !asked.has(String(b.tool_use_id)));
        if (m >= 0) {
          const id = String(blocksOf(turns[i])[m].tool_use_id);
          return `messages.${i}.content.${m}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
        }
      }
    }
    const next = all[g + 1];
    if (role !== 'assistant' || !next) continue;
    const answered = new Set(next.role === 'user' ? next.at.flatMap((i) => idsOf(turns[i], 'tool_result', 'tool_use_id')) : []);
    const missing = at.flatMap((i) => idsOf(turns[i], 'tool_use', 'id').map((id) => ({ i, id }))).filter((u) => !answered.has(u.id));
    if (missing.length) {
      return `messages.${missing[0].i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.map((u) => u.id).join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
  }
  return undefined;
}

/** The rule as a Joi custom check of a messages body (schema.ts). */
export function toolsPaired<T extends Body>(body: T, helpers: Joi.CustomHelpers): T | Joi.ErrorReport {
  const message = unpairedTool(body);
  return message ? helpers.error('tools.unpaired', { message }) : body;
}

export const toolPairingMessages = { 'tools.unpaired': '{#message}' };
