import { expect } from 'chai';
import { chatSchema } from '../../../api/routes/chat/schema';
import { plainChatBody } from '../../../api/routes/chat/fast-check';

type Obj = Record<string, unknown>;

/** What Joi returns for a JSON body (the gateway validates JSON without conversion), or its refusal. */
function joi(body: unknown): { ok: true; value: unknown } | { ok: false } {
  const { error, value } = chatSchema.validate(body, { abortEarly: true, convert: false });
  return error ? { ok: false } : { ok: true, value };
}

const base = (): Obj => ({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }] });

/** Values of every JSON kind, with the boundaries the schema's rules sit on. */
const VALUES: unknown[] = [
  undefined, null, true, false, 0, -0, 1, 2, 0.5, 1.5, 2.0000001, -1, -2, -2.5, 20, 21, 128, 129, 1e20, Infinity, -Infinity, 9007199254740991, 9007199254740992, 3.7,
  '', 'x', '1', 'true', 'i'.repeat(128), 'i'.repeat(129), [], [1], {}, { include_usage: true }, { include_usage: 'yes' }, { include_usage: false, extra: 1 },
];

/** Bodies: the base with one field set to each value, messages and tools of many shapes, and oddities. */
function corpus(): unknown[] {
  const out: unknown[] = [null, [], 'x', 5, {}, base()];
  const fields = ['model', 'messages', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'n', 'tools', 'user', 'seed', 'safety_identifier', 'logprobs', 'top_logprobs', 'frequency_penalty', 'presence_penalty'];
  for (const f of fields) {
    for (const v of VALUES) {
      const b = base();
      if (v === undefined) delete b[f];
      else b[f] = v;
      out.push(b);
    }
  }
  const messages: unknown[] = [
    [], [null], ['x'], [[]], [{}], [{ role: 'user' }], [{ role: 'robot', content: 'x' }], [{ role: 'user', content: 5 }],
    [{ role: 'user', content: '' }], [{ role: 'user', content: null }], [{ role: 'user', content: [] }], [{ role: 'user', content: {} }],
    [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }],
    [{ role: 'tool', tool_call_id: 'c', content: 'r' }, { role: 'system', content: [{ type: 'text', text: 's' }] }],
    [{ role: 'developer', content: 'd' }, { role: 'function', name: 'f', content: 'x' }], [{ role: 5, content: 'x' }], [{ role: '', content: 'x' }],
    // parts, tool calls and tool results of every shape
    [{ role: 'user', content: [null] }], [{ role: 'user', content: [{ type: 'text' }] }], [{ role: 'user', content: [{ type: 'text', text: 5 }] }], [{ role: 'user', content: [{ text: 'no type' }] }],
    [{ role: 'user', content: [{ type: 'image_url' }] }], [{ role: 'user', content: [{ type: 'image_url', image_url: 'data:x' }] }], [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:x', detail: 'low' } }] }],
    [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }, { type: 'text', text: '' }] }],
    [{ role: 'assistant', tool_calls: [null] }], [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function' }] }], [{ role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] }],
    [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: {} } }] }], [{ role: 'assistant', tool_calls: null, content: 'x' }], [{ role: 'assistant', tool_calls: 'x' }],
    [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'custom', custom: { name: 'p', input: 'x' } }] }],
    [{ role: 'tool', content: 'r' }], [{ role: 'tool', tool_call_id: 5, content: 'r' }], [{ role: 'user', tool_call_id: 5, content: 'r' }],
    // tool calls and tool messages that pair up, and that do not (tool-pairing.ts)
    [{ role: 'user', content: 'u' }, { role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }, { id: 'b', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'b', content: 'r' }, { role: 'tool', tool_call_id: 'a', content: 'r' }, { role: 'user', content: 'u' }],
    [{ role: 'user', content: 'u' }, { role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'user', content: 'u' }],
    [{ role: 'user', content: 'u' }, { role: 'tool', tool_call_id: 'a', content: 'r' }],
  ];
  for (const m of messages) out.push({ ...base(), messages: m });
  const tools: unknown[] = [[], [{}], [null], [{ type: '' }], [{ type: 5 }], [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }], [{ type: 'web_search' }, { type: 'function' }], ['function'],
    [{ type: 'function', function: null }], [{ type: 'function', function: { name: 'bad name' } }], [{ type: 'function', function: { name: 'x'.repeat(64) } }], [{ type: 'function', function: { name: 'x'.repeat(65) } }],
    [{ type: 'function', function: { name: '' } }], [{ type: 'function', function: { name: 'f', parameters: 'x' } }], [{ type: 'function', function: { name: 'f', parameters: null } }], [{ type: 'function', function: { name: 'f', strict: 'true' } }],
    [{ type: 'function', function: { name: 'f', strict: null, description: '' } }], [{ type: 'function', function: { name: 'f', description: 5 } }], [{ type: 'custom' }], [{ type: 'custom', custom: { name: 'patch' } }], [{ type: 'custom', custom: { name: '' } }], [{ type: 'custom', custom: { description: 'd' } }]];
  for (const t of tools) out.push({ ...base(), tools: t });
  const others: Obj[] = [
    { tool_choice: 'auto' }, { tool_choice: 'none' }, { tool_choice: 'required' }, { tool_choice: 'sometimes' }, { tool_choice: null }, { tool_choice: 5 }, { tool_choice: {} },
    { tool_choice: { type: 'function' } }, { tool_choice: { type: 'function', function: { name: 'f' } } }, { tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [] } } },
    { response_format: null }, { response_format: 'json' }, { response_format: {} }, { response_format: { type: 'text' } }, { response_format: { type: 'json_object' } }, { response_format: { type: 'grammar', grammar: 'x' } },
    { response_format: { type: 'json_schema' } }, { response_format: { type: 'json_schema', json_schema: { name: 'bad name' } } }, { response_format: { type: 'json_schema', json_schema: { name: 'ok', schema: { type: 'object' }, strict: true } } },
    { response_format: { type: 'json_schema', json_schema: { name: 'ok', schema: 'x' } } }, { response_format: { type: 'json_schema', json_schema: { name: 'ok', strict: 'yes' } } },
    { stop: 'END' }, { stop: ['a', ''] }, { stop: 5 }, { stop: [1] }, { stop: null }, { parallel_tool_calls: true }, { parallel_tool_calls: 'yes' }, { parallel_tool_calls: null }, { user: 'u' }, { user: 5 }, { user: null },
  ];
  for (const extra of others) out.push({ ...base(), ...extra });
  // stream_options need a stream, top_logprobs logprobs: true (null is absent)
  const paired: Obj[] = [
    { stream: true, stream_options: { include_usage: true } }, { stream: false, stream_options: { include_usage: true } }, { stream: false, stream_options: null }, { stream: true, stream_options: 'x' },
    { logit_bias: {} }, { logit_bias: { '50256': -100, '7': 100, '0': 0.5 } }, { logit_bias: { '50256': -101 } }, { logit_bias: { AI: 1 } }, { logit_bias: { '01': 1 } }, { logit_bias: { '-1': 1 } }, { logit_bias: { '1': '5' } }, { logit_bias: null }, { logit_bias: [] }, { logit_bias: 5 },
    { service_tier: 'flex' }, { service_tier: 'turbo' }, { service_tier: null }, { service_tier: 5 },
    { logprobs: true, top_logprobs: 2 }, { logprobs: false, top_logprobs: 2 }, { logprobs: null, top_logprobs: 0 }, { logprobs: true, top_logprobs: 21 }, { logprobs: false, top_logprobs: null },
    // not both caps (null is absent); reasoning_effort and verbosity among OpenAI's values
    { max_tokens: 5, max_completion_tokens: 5 }, { max_tokens: 5, max_completion_tokens: null }, { max_tokens: null, max_completion_tokens: 5 }, { max_tokens: 0, max_completion_tokens: 5 }, { max_tokens: 5, max_completion_tokens: 'x' },
    ...['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max', 'extreme', 'High', '', null, 5, ['low']].map((reasoning_effort) => ({ reasoning_effort })),
    ...['low', 'medium', 'high', 'max', 'none', '', null, 1.5, true, {}].map((verbosity) => ({ verbosity })),
  ];
  for (const extra of paired) out.push({ ...base(), ...extra });
  // a tool_choice needs tools to choose from (none of the above has tools); stop takes up to 4 strings
  const f = { type: 'function', function: { name: 'f' } };
  const withTools: Obj[] = [
    { tools: [f], tool_choice: 'auto' }, { tools: [f], tool_choice: 'none' }, { tools: [f], tool_choice: 'required' }, { tools: [f], tool_choice: { type: 'function', function: { name: 'f' } } },
    { tools: [f], tool_choice: null }, { tools: [], tool_choice: 'auto' }, { tools: [], tool_choice: 'none' }, { tools: [], tool_choice: null }, { tools: null, tool_choice: 'auto' },
    { tools: [f], parallel_tool_calls: false }, { tools: [], parallel_tool_calls: true }, { tools: [], parallel_tool_calls: null }, { tools: [f], parallel_tool_calls: 'no' },
    { tools: [] }, { tools: Array.from({ length: 128 }, () => f) }, { tools: Array.from({ length: 129 }, () => f) },
    { messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: null, tool_calls: [] }] }, { messages: [{ role: 'assistant', content: 'x', tool_calls: null }] },
    { tools: [{ type: 'web_search' }], tool_choice: 'required' }, { tools: [f], tool_choice: 'sometimes' }, { tools: [], tool_choice: { type: 'function' } },
    // a choice naming a function not among the tools is not refused (docs/api.md: OpenAI's words for it are not known)
    { tools: [f], tool_choice: { type: 'function', function: { name: 'g' } } }, { tools: [{ type: 'web_search' }], tool_choice: { type: 'function', function: { name: 'f' } } },
    { stop: [] }, { stop: ['a', 'b', 'c', 'd'] }, { stop: ['a', 'b', 'c', 'd', 'e'] }, { stop: ['', '', '', '', '', ''] }, { stop: [1, 2, 3, 4, 5] }, { stop: ['a', 'b', 'c', 'd', 5] },
  ];
  for (const extra of withTools) out.push({ ...base(), ...extra });
  // own __proto__ keys, at the top, in a message, deep in a tool
  for (const text of ['{"model":"m","messages":[{"role":"user","content":"x"}],"__proto__":{"a":1}}', '{"model":"m","messages":[{"role":"user","content":"x","__proto__":{"role":5}}]}', '{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"parameters":{"__proto__":{}}}}]}']) out.push(JSON.parse(text));
  return out;
}

describe('chat bodies checked without Joi (api/routes/chat/fast-check.ts)', () => {
  it('accepts only what the chat schema accepts, and returns what it returns, over the corpus', () => {
    const bodies = corpus();
    let accepted = 0;
    for (const body of bodies) {
      const fast = plainChatBody(body);
      if (!fast) continue;
      accepted++;
      const j = joi(body);
      expect(j.ok, `accepted without Joi, refused by Joi: ${JSON.stringify(body)}`).to.equal(true);
      if (j.ok) {
        expect(fast, JSON.stringify(body)).to.deep.equal(j.value);
        expect(Object.keys(fast)).to.deep.equal(Object.keys(j.value as Obj));
      }
    }
    // the common bodies do take the fast way (the point of it), and many of the corpus go to Joi
    expect(accepted).to.be.greaterThan(40);
    expect(bodies.length - accepted).to.be.greaterThan(60);
  });

  it('copies the levels Joi copies, so a handler changing the body never changes the request’s own', () => {
    const body = { ...base(), tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }], stream: true, stream_options: { include_usage: true } } as Obj;
    const fast = plainChatBody(body)!;
    const j = joi(body) as { ok: true; value: Obj };
    for (const [k, level] of [['top', (o: Obj) => o], ['messages', (o: Obj) => o.messages], ['message', (o: Obj) => (o.messages as Obj[])[0]], ['tools', (o: Obj) => o.tools], ['tool', (o: Obj) => (o.tools as Obj[])[0]], ['function', (o: Obj) => (o.tools as Obj[])[0].function], ['stream_options', (o: Obj) => o.stream_options]] as const) {
      expect(level(fast) === level(body), `${k} copied`).to.equal(level(j.value) === level(body));
    }
    const params = (o: Obj) => ((o.tools as Obj[])[0].function as Obj).parameters;
    expect(params(fast), 'as Joi: not copied below a function').to.equal(params(body));
  });

  it('takes the fast way for a tool_choice with its tools and for 4 stop sequences, and leaves a choice without tools and a fifth sequence to Joi', () => {
    const tools = [{ type: 'function', function: { name: 'f' } }];
    for (const extra of [{ tools, tool_choice: 'none' }, { tools, tool_choice: { type: 'function', function: { name: 'f' } } }, { stop: ['a', 'b', 'c', 'd'] }, { tool_choice: null }]) {
      expect(plainChatBody({ ...base(), ...extra }), JSON.stringify(extra)).to.deep.equal((joi({ ...base(), ...extra }) as { value: unknown }).value);
    }
    for (const extra of [{ tool_choice: 'none' }, { tools: [], tool_choice: 'auto' }, { stop: ['a', 'b', 'c', 'd', 'e'] }]) {
      expect(plainChatBody({ ...base(), ...extra }), JSON.stringify(extra)).to.equal(undefined);
      expect(joi({ ...base(), ...extra }).ok, JSON.stringify(extra)).to.equal(false);
    }
  });

  it('takes the fast way for tool calls and tool messages that pair up, and leaves unpaired ones to Joi, which refuses them', () => {
    const call = (id: string) => ({ id, type: 'function', function: { name: 'f', arguments: '{}' } });
    const asked = { role: 'assistant', content: null, tool_calls: [call('a')] };
    const paired = { ...base(), messages: [{ role: 'user', content: 'u' }, asked, { role: 'tool', tool_call_id: 'a', content: 'r' }] };
    const unanswered = { ...base(), messages: [{ role: 'user', content: 'u' }, asked, { role: 'user', content: 'u' }] };
    const orphan = { ...base(), messages: [{ role: 'user', content: 'u' }, { role: 'tool', tool_call_id: 'a', content: 'r' }] };
    const accepted = joi(paired);
    expect(accepted.ok).to.equal(true);
    expect(plainChatBody(paired), 'a tool loop keeps the fast way').to.deep.equal(accepted.ok ? accepted.value : null);
    for (const body of [unanswered, orphan]) expect(plainChatBody(body), JSON.stringify(body)).to.equal(undefined);
    expect(joi(paired).ok).to.equal(true);
    expect(joi(unanswered).ok).to.equal(false);
    expect(joi(orphan).ok).to.equal(false);
  });

  it('leaves every refusal to Joi (its message and param)', () => {
    for (const body of [{ model: '', messages: [] }, { ...base(), temperature: 3 }, { ...base(), stream: 'yes' }, { ...base(), messages: [{ role: 'robot' }] }]) {
      expect(plainChatBody(body)).to.equal(undefined);
      expect(joi(body).ok).to.equal(false);
    }
  });
});
