import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';
import { call, keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';
import { CLEARED_RESULT } from '../../../api/dialects/messages/context-editing';

const BETA = 'context-management-2025-06-27';
const words = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ');
const tools: Anthropic.Beta.BetaTool[] = ['read', 'grep'].map((name) => ({ name, description: `${name} a file`, input_schema: { type: 'object', properties: { path: { type: 'string' } } } }));

/** A task with three tool uses (read, grep, read), each answered with a long result. */
function conversation(): Anthropic.Beta.BetaMessageParam[] {
  const turns: Anthropic.Beta.BetaMessageParam[] = [{ role: 'user', content: 'fix the build' }];
  for (const [i, name] of ['read', 'grep', 'read'].entries()) {
    turns.push({ role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${i}`, name, input: { path: `file${i}.ts` } }] });
    turns.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: words(`RESULT${i}x`, 300) }] });
  }
  return turns;
}
type Sent = { messages: Array<{ role: string; content: unknown; tool_call_id?: string; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }> }> };
const sent = () => env().sim.log.entries.at(-1)!.body as Sent;
const results = () => sent().messages.filter((m) => m.role === 'tool');

/** Anthropic's context editing (`clear_tool_uses_20250919`) applied by the gateway for a translated upstream. */
describe('messages context editing (translated upstream)', () => {
  const s = openaiOrg();
  let a: Anthropic;
  before(() => {
    a = new Anthropic({ apiKey: s.o.key, baseURL: env().gw.url, maxRetries: 0 });
  });

  it('clears the oldest tool results past the trigger, keeping the last `keep`, and reports it (JSON and streamed); excluded tools and inputs as asked', async () => {
    const edit = { type: 'clear_tool_uses_20250919' as const, trigger: { type: 'tool_uses' as const, value: 2 }, keep: { type: 'tool_uses' as const, value: 1 } };
    const r = await a.beta.messages.create({ model: 'sim-chat', max_tokens: 64, betas: [BETA], tools, messages: conversation(), context_management: { edits: [edit] } });
    const [applied] = r.context_management!.applied_edits as Anthropic.Beta.BetaClearToolUses20250919EditResponse[];
    expect(applied).to.include({ type: 'clear_tool_uses_20250919', cleared_tool_uses: 2 });
    expect(applied.cleared_input_tokens).to.be.above(500);
    expect(results().map((m) => String(m.content).slice(0, 9))).to.deep.equal([CLEARED_RESULT.slice(0, 9), CLEARED_RESULT.slice(0, 9), 'RESULT2x0']);
    expect(sent().messages.flatMap((m) => m.tool_calls ?? []).map((c) => c.function.arguments), 'inputs kept').to.deep.equal(['{"path":"file0.ts"}', '{"path":"file1.ts"}', '{"path":"file2.ts"}']);

    const stream = a.beta.messages.stream({ model: 'sim-chat', max_tokens: 64, betas: [BETA], tools, messages: conversation(), context_management: { edits: [{ ...edit, exclude_tools: ['grep'], clear_tool_inputs: true }] } });
    let delta: Anthropic.Beta.BetaRawMessageDeltaEvent | undefined;
    for await (const ev of stream) if (ev.type === 'message_delta') delta = ev;
    expect((delta!.context_management!.applied_edits[0] as Anthropic.Beta.BetaClearToolUses20250919EditResponse).cleared_tool_uses, 'grep excluded').to.equal(1);
    expect(results().map((m) => String(m.content).slice(0, 9))).to.deep.equal([CLEARED_RESULT.slice(0, 9), 'RESULT1x0', 'RESULT2x0']);
    expect(sent().messages.flatMap((m) => m.tool_calls ?? []).map((c) => c.function.arguments), 'the cleared use’s input too').to.deep.equal(['{}', '{"path":"file1.ts"}', '{"path":"file2.ts"}']);
  });

  it('below the trigger, or when clearing would free less than clear_at_least, sends everything and reports no edit; count_tokens counts the edited request', async () => {
    await a.beta.messages.create({ model: 'sim-chat', max_tokens: 64, betas: [BETA], tools, messages: conversation(), context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] } }).then((r) => {
      expect(r.context_management, 'under 100,000 input tokens').to.deep.equal({ applied_edits: [] });
    });
    expect(results().every((m) => String(m.content).startsWith('RESULT'))).to.equal(true);
    const atLeast = await a.beta.messages.create({
      model: 'sim-chat',
      max_tokens: 64,
      betas: [BETA],
      tools,
      messages: conversation(),
      context_management: { edits: [{ type: 'clear_tool_uses_20250919', trigger: { type: 'tool_uses', value: 1 }, keep: { type: 'tool_uses', value: 2 }, clear_at_least: { type: 'input_tokens', value: 50_000 } }] },
    });
    expect(atLeast.context_management!.applied_edits).to.deep.equal([]);
    expect(results().every((m) => String(m.content).startsWith('RESULT'))).to.equal(true);

    const plain = await a.beta.messages.countTokens({ model: 'sim-chat', betas: [BETA], tools, messages: conversation() });
    const edited = await a.beta.messages.countTokens({ model: 'sim-chat', betas: [BETA], tools, messages: conversation(), context_management: { edits: [{ type: 'clear_tool_uses_20250919', trigger: { type: 'tool_uses', value: 2 }, keep: { type: 'tool_uses', value: 1 } }] } });
    expect(edited.context_management!.original_input_tokens).to.equal(plain.input_tokens);
    expect(edited.input_tokens).to.be.below(plain.input_tokens - 500);
  });

  it('refuses a malformed edit (400, context_management) before anything is sent or billed; thinking clearing and compaction edits change nothing here', async () => {
    await usageSettled();
    const billed = await UsageEvent.count({ where: { orgId: s.o.org.id } });
    const before = env().sim.log.entries.length;
    for (const cm of [{ edits: [{ type: 'clear_everything' }] }, { edits: [{ type: 'clear_tool_uses_20250919', keep: { type: 'input_tokens', value: 3 } }] }, { edits: 'all' }, { edits: [{ type: 'clear_tool_uses_20250919', exclude_tools: 'read' }] }]) {
      const r = await call('POST', '/v1/messages', { headers: { ...keyHeader(s.o.key), 'anthropic-version': '2023-06-01', 'anthropic-beta': BETA }, json: { model: 'sim-chat', max_tokens: 16, messages: [{ role: 'user', content: 'x' }], context_management: cm } });
      expect([r.status, r.body.error?.type, r.body.error?.code], JSON.stringify(cm)).to.deep.equal([400, 'invalid_request_error', 'invalid_request']);
    }
    expect(env().sim.log.entries.length, 'nothing sent').to.equal(before);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: s.o.org.id } }), 'nothing billed').to.equal(billed);
    const other = await a.beta.messages.create({ model: 'sim-chat', max_tokens: 64, betas: [BETA], messages: [{ role: 'user', content: 'hi' }], context_management: { edits: [{ type: 'clear_thinking_20251015' }] } });
    expect(other.context_management).to.deep.equal({ applied_edits: [] });
  });
});
