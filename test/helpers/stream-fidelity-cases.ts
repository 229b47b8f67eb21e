/* eslint-disable @typescript-eslint/no-explicit-any */
import { chunk, completion, usageChunk, type UpstreamKind } from './scripted-upstream';

/**
 * One answer scripted twice per upstream kind, in that kind's own wire format: as its JSON answer and
 * as its event stream, the two saying the same (the same text, calls, reasoning, stop and usage). The
 * stream-fidelity suite asks the gateway for both in every dialect and compares what the official SDKs
 * accumulate from the stream with the JSON answer.
 */
export interface StreamCase {
  name: string;
  /** The dialects compared (all three unless named). */
  dialects?: Array<'chat' | 'messages' | 'responses'>;
  /** The chat and responses requests ask for log probabilities. */
  logprobs?: boolean;
  scripts: Partial<Record<UpstreamKind, { json: unknown; sse: unknown[] }>>;
}

const USAGE = { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42, prompt_tokens_details: { cached_tokens: 10 }, completion_tokens_details: { reasoning_tokens: 4 } };
const ANTHROPIC_COUNTS = { input_tokens: 20, cache_creation_input_tokens: 3, cache_read_input_tokens: 10, output_tokens: 12 };
/** A Message's usage as api.anthropic.com sends it (scripts/simulator/routes/messages.ts: the counts, the cache writes by lifetime, the tier, where inference ran). */
const ANTHROPIC_USAGE = { ...ANTHROPIC_COUNTS, cache_creation: { ephemeral_5m_input_tokens: 3, ephemeral_1h_input_tokens: 0 }, service_tier: 'standard', inference_geo: 'global' };
const GEMINI_USAGE = { promptTokenCount: 30, candidatesTokenCount: 8, totalTokenCount: 42, cachedContentTokenCount: 10, thoughtsTokenCount: 4 };

type Block = { type: 'text'; text: string } | { type: 'thinking'; thinking: string; signature: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/** A stop's `stop_details`: a refusal's (SDK 1.17 RefusalStopDetails, nothing said of it), else null. */
const detailsOf = (stop: string | null) => (stop === 'refusal' ? { type: 'refusal', category: null, explanation: null } : null);

/** An Anthropic Message of `content`, with the fields the API always sends (`container`, `stop_details`, `diagnostics`). */
const message = (content: Block[], stop: string | null) => ({ model: 'up-model', id: 'msg_up', type: 'message', role: 'assistant', content, container: null, stop_reason: stop, stop_sequence: null, stop_details: detailsOf(stop), usage: ANTHROPIC_USAGE, diagnostics: null });

/** The same Message as Anthropic streams it: each block's start, its deltas in two pieces (a signature last), its stop. */
function messageEvents(content: Block[], stop: string): unknown[] {
  const ev: unknown[] = [{ type: 'message_start', message: { ...message([], null), usage: { ...ANTHROPIC_USAGE, output_tokens: 1 } } }];
  const delta = (index: number, d: Record<string, unknown>) => ev.push({ type: 'content_block_delta', index, delta: d });
  content.forEach((b, index) => {
    if (b.type === 'text') {
      ev.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      delta(index, { type: 'text_delta', text: b.text.slice(0, 3) });
      delta(index, { type: 'text_delta', text: b.text.slice(3) });
    } else if (b.type === 'thinking') {
      ev.push({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      delta(index, { type: 'thinking_delta', thinking: b.thinking });
      delta(index, { type: 'signature_delta', signature: b.signature });
    } else {
      ev.push({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      const json = JSON.stringify(b.input);
      delta(index, { type: 'input_json_delta', partial_json: json.slice(0, 4) });
      delta(index, { type: 'input_json_delta', partial_json: json.slice(4) });
    }
    if (index === 0) ev.push({ type: 'ping' });
    ev.push({ type: 'content_block_stop', index });
  });
  ev.push({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null, stop_details: detailsOf(stop) }, usage: ANTHROPIC_COUNTS });
  ev.push({ type: 'message_stop' });
  return ev;
}

const anthropic = (content: Block[], stop: string) => ({ json: message(content, stop), sse: messageEvents(content, stop) });

/** A Gemini GenerateContentResponse of one candidate (`usage`: cumulative, its last one counts). */
const gemini = (parts: unknown[], finish?: string, usage: unknown = GEMINI_USAGE) => ({
  candidates: [{ content: { role: 'model', parts }, ...(finish ? { finishReason: finish } : {}), index: 0 }],
  usageMetadata: usage,
  modelVersion: 'up-model',
  responseId: 'r1',
});

const CALLS = [
  { id: 'call_1', type: 'function', function: { name: 'a', arguments: '{"x":1}' } },
  { id: 'call_2', type: 'function', function: { name: 'b', arguments: '{"y":"two"}' } },
  { id: 'call_3', type: 'function', function: { name: 'a', arguments: '{"x":3}' } },
];
const toolUses = CALLS.map((c) => ({ type: 'tool_use' as const, id: c.id, name: c.function.name, input: JSON.parse(c.function.arguments) }));
/** A call as OpenAI streams it: its id, type and name first (arguments ""), then its arguments in two pieces. */
const streamedCall = (c: (typeof CALLS)[number], index: number) => [
  chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] }),
  chunk({ tool_calls: [{ index, function: { arguments: c.function.arguments.slice(0, 3) } }] }),
  chunk({ tool_calls: [{ index, function: { arguments: c.function.arguments.slice(3) } }] }),
];
const logprob = (token: string) => ({ token, logprob: -0.5, bytes: [...Buffer.from(token)], top_logprobs: [{ token, logprob: -0.5, bytes: [...Buffer.from(token)] }] });

export const STREAM_CASES: StreamCase[] = [
  {
    name: 'text',
    scripts: {
      openai: { json: completion({ content: 'Hello world', refusal: null }, 'stop', USAGE), sse: [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hello' }), chunk({ content: ' world' }), chunk({}, 'stop'), usageChunk(USAGE)] },
      anthropic: anthropic([{ type: 'text', text: 'Hello world' }], 'end_turn'),
      gemini: { json: gemini([{ text: 'Hello world' }], 'STOP'), sse: [gemini([{ text: 'Hello' }], undefined, { promptTokenCount: 30 }), gemini([{ text: ' world' }], 'STOP')] },
    },
  },
  {
    name: 'text, then three tool calls',
    scripts: {
      openai: { json: completion({ content: 'Calling', tool_calls: CALLS }, 'tool_calls', USAGE), sse: [chunk({ role: 'assistant', content: 'Calling' }), ...CALLS.flatMap(streamedCall), chunk({}, 'tool_calls'), usageChunk(USAGE)] },
      anthropic: anthropic([{ type: 'text', text: 'Calling' }, ...toolUses], 'tool_use'),
      gemini: {
        json: gemini([{ text: 'hmm', thought: true }, { text: 'Calling' }, { functionCall: { name: 'a', args: { x: 1 } } }, { functionCall: { name: 'b', args: { y: 2 } } }], 'STOP'),
        sse: [gemini([{ text: 'hmm', thought: true }], undefined, { promptTokenCount: 30 }), gemini([{ text: 'Calling' }]), gemini([{ functionCall: { name: 'a', args: { x: 1 } } }, { functionCall: { name: 'b', args: { y: 2 } } }], 'STOP')],
      },
    },
  },
  {
    // OpenAI's JSON and streamed answers both have content null for a turn of tool calls alone
    name: 'tool calls alone',
    scripts: {
      openai: { json: completion({ content: null, tool_calls: CALLS.slice(0, 2) }, 'tool_calls', USAGE), sse: [chunk({ role: 'assistant', content: null }), ...CALLS.slice(0, 2).flatMap(streamedCall), chunk({}, 'tool_calls'), usageChunk(USAGE)] },
      anthropic: anthropic(toolUses.slice(0, 2), 'tool_use'),
      gemini: { json: gemini([{ functionCall: { name: 'a', args: { x: 1 } } }], 'STOP'), sse: [gemini([{ functionCall: { name: 'a', args: { x: 1 } } }], 'STOP')] },
    },
  },
  {
    name: 'reasoning, then tool calls',
    scripts: {
      anthropic: anthropic([{ type: 'thinking', thinking: 'Let me think', signature: 'sig123' }, ...toolUses.slice(0, 1)], 'tool_use'),
      gemini: { json: gemini([{ text: 'hmm', thought: true }, { functionCall: { name: 'a', args: { x: 1 } } }], 'STOP'), sse: [gemini([{ text: 'hmm', thought: true }]), gemini([{ functionCall: { name: 'a', args: { x: 1 } } }], 'STOP')] },
    },
  },
  {
    name: 'reasoning cut at max tokens',
    scripts: {
      openai: { json: completion({ content: '', reasoning_content: 'Let me' }, 'length', USAGE), sse: [chunk({ role: 'assistant', content: '' }), chunk({ reasoning_content: 'Let me' }), chunk({}, 'length'), usageChunk(USAGE)] },
      anthropic: anthropic([{ type: 'thinking', thinking: 'Let me', signature: 'sig1' }], 'max_tokens'),
      gemini: { json: gemini([{ text: 'hmm', thought: true }], 'MAX_TOKENS'), sse: [gemini([{ text: 'hmm', thought: true }], 'MAX_TOKENS')] },
    },
  },
  {
    name: 'an empty answer',
    scripts: {
      anthropic: anthropic([], 'end_turn'),
      gemini: { json: gemini([], 'STOP'), sse: [gemini([], 'STOP')] },
    },
  },
  {
    // some OpenAI-compatible servers interleave the argument deltas of parallel calls (OpenAI's SDK accumulates by index)
    name: 'two parallel tool calls whose argument deltas interleave',
    scripts: {
      openai: {
        json: completion({ content: null, tool_calls: CALLS.slice(0, 2) }, 'tool_calls', USAGE),
        sse: [
          chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'a', arguments: '' } }, { index: 1, id: 'call_2', type: 'function', function: { name: 'b', arguments: '' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":' } }, { index: 1, function: { arguments: '{"y":' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }, { index: 1, function: { arguments: '"two"}' } }] }),
          chunk({}, 'tool_calls'),
          usageChunk(USAGE),
        ],
      },
    },
  },
  {
    // Gemini behind OpenAI-compatible proxies: each parallel call on index 0, with its own id
    name: 'two parallel tool calls on one index, each with its own id',
    scripts: {
      openai: {
        json: completion({ content: null, tool_calls: CALLS.slice(0, 2) }, 'tool_calls', USAGE),
        sse: [
          chunk({ role: 'assistant', content: null }),
          chunk({ tool_calls: [{ index: 0, ...CALLS[0] }] }),
          chunk({ tool_calls: [{ index: 0, id: 'call_2', type: 'function', function: { name: 'b', arguments: '{"y":' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '"two"}' } }] }),
          chunk({}, 'tool_calls'),
          usageChunk(USAGE),
        ],
      },
    },
  },
  {
    name: 'reasoning, then text',
    scripts: {
      openai: { json: completion({ content: 'Answer', reasoning_content: 'Let me think' }, 'stop', USAGE), sse: [chunk({ role: 'assistant', content: '' }), chunk({ reasoning_content: 'Let me' }), chunk({ reasoning_content: ' think' }), chunk({ content: 'Answer' }), chunk({}, 'stop'), usageChunk(USAGE)] },
      anthropic: anthropic([{ type: 'thinking', thinking: 'Let me think', signature: 'sig123' }, { type: 'text', text: 'Answer' }], 'end_turn'),
    },
  },
  {
    name: 'a refusal',
    scripts: {
      openai: { json: completion({ content: null, refusal: 'I cannot help' }, 'stop', USAGE), sse: [chunk({ role: 'assistant', content: null, refusal: '' }), chunk({ refusal: 'I cannot' }), chunk({ refusal: ' help' }), chunk({}, 'stop'), usageChunk(USAGE)] },
      anthropic: anthropic([{ type: 'text', text: 'I can' }], 'refusal'),
      gemini: { json: gemini([{ text: 'Some' }], 'SAFETY'), sse: [gemini([{ text: 'Some' }]), gemini([], 'SAFETY')] },
    },
  },
  {
    name: 'cut at max tokens',
    scripts: {
      openai: { json: completion({ content: 'Cut sho' }, 'length', USAGE), sse: [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Cut sho' }), chunk({}, 'length'), usageChunk(USAGE)] },
      anthropic: anthropic([{ type: 'text', text: 'Cut sho' }], 'max_tokens'),
      gemini: { json: gemini([{ text: 'Cut' }], 'MAX_TOKENS'), sse: [gemini([{ text: 'Cut' }], 'MAX_TOKENS')] },
    },
  },
  {
    // billed, and reported, by the gateway's estimate (workers/providers/openai/usage-estimate.ts)
    name: 'no usage reported',
    scripts: {
      openai: { json: { ...completion({ content: 'Hello world' }, 'stop'), usage: undefined }, sse: [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hello' }), chunk({ content: ' world' }), chunk({}, 'stop')] },
      gemini: { json: { ...gemini([{ text: 'Hello world' }], 'STOP'), usageMetadata: undefined }, sse: [{ ...gemini([{ text: 'Hello' }]), usageMetadata: undefined }, { ...gemini([{ text: ' world' }], 'STOP'), usageMetadata: undefined }] },
    },
  },
  {
    name: 'a stop sequence, an empty tool input',
    scripts: {
      anthropic: {
        json: { ...message([{ type: 'text', text: 'Done' }, { type: 'tool_use', id: 'toolu_1', name: 'a', input: {} }], 'stop_sequence'), stop_sequence: '###' },
        sse: messageEvents([{ type: 'text', text: 'Done' }, { type: 'tool_use', id: 'toolu_1', name: 'a', input: {} }], 'stop_sequence').map((e: any) =>
          e.type === 'message_delta' ? { ...e, delta: { stop_reason: 'stop_sequence', stop_sequence: '###', stop_details: null } } : e.type === 'content_block_delta' && e.delta.partial_json !== undefined ? { ...e, delta: { type: 'input_json_delta', partial_json: '' } } : e,
        ),
      },
    },
  },
  {
    name: 'log probabilities',
    dialects: ['chat', 'responses'],
    logprobs: true,
    scripts: {
      openai: {
        json: completion({ content: 'Hi there' }, 'stop', USAGE, { logprobs: { content: [logprob('Hi'), logprob(' there')], refusal: null } }),
        sse: [
          chunk({ role: 'assistant', content: '' }),
          chunk({ content: 'Hi' }, null, { logprobs: { content: [logprob('Hi')], refusal: null } }),
          chunk({ content: ' there' }, null, { logprobs: { content: [logprob(' there')], refusal: null } }),
          chunk({}, 'stop'),
          usageChunk(USAGE),
        ],
      },
    },
  },
];
