import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { QueryTypes } from 'sequelize';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { UsageEvent } from '../../../shared/db/models';
import { db } from '../../../shared/db/sequelize';

const BETA = 'compact-2026-01-12';
const words = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ');
/** A conversation well over 50,000 input tokens: a long answer between two user messages. */
const longConversation = (): Anthropic.Beta.BetaMessageParam[] => [
  { role: 'user', content: 'remember that the code word is PELICAN' },
  { role: 'assistant', content: `noted. ${words('LONGANSWER', 20_000)}` },
  { role: 'user', content: 'what was the code word?' },
];
const compact = (more: Partial<Anthropic.Beta.BetaCompact20260112Edit> = {}) => ({ edits: [{ type: 'compact_20260112' as const, trigger: { type: 'input_tokens' as const, value: 50_000 }, ...more }] });
const sentBodies = (from: number) => env().sim.log.entries.slice(from).map((e) => JSON.stringify(e.body));

/** Anthropic's server-side compaction (`compact_20260112`) applied by the gateway for a translated upstream. */
describe('messages compaction (translated upstream)', () => {
  let o: Awaited<ReturnType<typeof buildOrg>>;
  let a: Anthropic;
  beforeEach(async () => {
    o = await buildOrg(env().redis);
    a = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
  });

  it('past the trigger the model first summarises the conversation (billed, one Activity row), then answers from the summary; the answer opens with the compaction block, usage.iterations reports both passes, and a follow-up sending the block back continues from it', async function () {
    this.timeout(30_000);
    const seen = env().sim.log.entries.length;
    const r = await a.beta.messages.create({ model: 'sim-chat', max_tokens: 64, betas: [BETA], system: 'be brief', messages: longConversation(), context_management: compact({ instructions: 'Summarise for a PELICAN keeper.' }) });
    expect(r.content.map((b) => b.type)).to.deep.equal(['compaction', 'text']);
    const block = r.content[0] as Anthropic.Beta.BetaCompactionBlock;
    expect(block).to.have.keys(['type', 'content', 'encrypted_content']);
    expect(block.content).to.be.a('string').and.not.equal('');
    expect(block.encrypted_content).to.equal(null);
    const [pass, answer] = sentBodies(seen);
    expect(sentBodies(seen), 'two upstream calls').to.have.length(2);
    expect(pass, 'the summary pass saw the whole conversation, asked with the instructions').to.include('LONGANSWER19999').and.to.include('Summarise for a PELICAN keeper.');
    expect(pass).to.not.include('CONTEXT CHECKPOINT COMPACTION');
    expect(answer, 'the answer: the system prompt and the summary').to.include('be brief').and.to.include(JSON.stringify(block.content).slice(1, 40));
    expect(answer, 'not the conversation it replaced').to.not.include('LONGANSWER');
    expect(r.stop_reason).to.equal('end_turn');
    const its = r.usage.iterations!;
    expect(its.map((i) => i.type)).to.deep.equal(['compaction', 'message']);
    expect(its[0].input_tokens, 'the summary pass read the long conversation').to.be.above(50_000);
    expect(r.usage.input_tokens, 'the top level is the answer alone').to.equal(its[1].input_tokens).and.to.be.below(5_000);
    expect((its[1] as Anthropic.Beta.BetaMessageIterationUsage).model).to.equal('sim-chat');
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { orgId: o.org.id } });
    expect(events, 'both passes billed').to.have.length(2);
    const billedInput = events.reduce((n, e) => n + e.inputTokens, 0);
    expect(billedInput).to.equal(its[0].input_tokens + its[1].input_tokens);
    const rows = async () => db().query<{ input_tokens: number }>("SELECT input_tokens FROM request_logs WHERE org_id = :org AND route = '/v1/messages'", { type: QueryTypes.SELECT, replacements: { org: o.org.id } });
    expect(await waitFor(async () => (await rows()).length === 1, 10_000), 'one Activity row').to.equal(true);
    expect((await rows())[0].input_tokens, 'with both passes').to.equal(billedInput);

    // the client sends the answer back whole: everything before the compaction block is dropped for its summary
    const seen2 = env().sim.log.entries.length;
    const next = await a.beta.messages.create({ model: 'sim-chat', max_tokens: 64, betas: [BETA], messages: [...longConversation(), { role: 'assistant', content: r.content as Anthropic.Beta.BetaContentBlockParam[] }, { role: 'user', content: 'and the colour?' }], context_management: compact() });
    expect(next.content.map((b) => b.type), 'under the trigger now: no compaction').to.deep.equal(['text']);
    expect(next.usage.iterations ?? null).to.equal(null);
    const followUp = sentBodies(seen2);
    expect(followUp, 'one call').to.have.length(1);
    expect(followUp[0]).to.include('Summary of the earlier conversation').and.to.include('and the colour?').and.to.not.include('LONGANSWER').and.to.not.include('PELICAN is');
    const counted = await a.beta.messages.countTokens({ model: 'sim-chat', betas: [BETA], messages: [...longConversation(), { role: 'assistant', content: r.content as Anthropic.Beta.BetaContentBlockParam[] }, { role: 'user', content: 'and the colour?' }] });
    expect(counted.input_tokens, 'count_tokens counts from the block too').to.be.below(5_000);
  });

  it('streams the compaction block first (start, one compaction_delta with the summary, stop), the answer after it, and usage.iterations on message_delta; the SDK assembles the same message', async function () {
    this.timeout(30_000);
    const stream = a.beta.messages.stream({ model: 'sim-chat', max_tokens: 64, betas: [BETA], messages: longConversation(), context_management: compact() });
    const events: Anthropic.Beta.BetaRawMessageStreamEvent[] = [];
    for await (const ev of stream) events.push(ev);
    const final = await stream.finalMessage();
    const starts = events.filter((e): e is Anthropic.Beta.BetaRawContentBlockStartEvent => e.type === 'content_block_start');
    expect(starts.map((e) => [e.index, e.content_block.type])).to.deep.equal([[0, 'compaction'], [1, 'text']]);
    const deltas = events.filter((e): e is Anthropic.Beta.BetaRawContentBlockDeltaEvent => e.type === 'content_block_delta' && e.index === 0);
    expect(deltas.map((e) => e.delta.type)).to.deep.equal(['compaction_delta']);
    expect(final.content.map((b) => b.type)).to.deep.equal(['compaction', 'text']);
    expect((final.content[0] as Anthropic.Beta.BetaCompactionBlock).content).to.equal((deltas[0].delta as Anthropic.Beta.BetaCompactionContentBlockDelta).content).and.to.be.a('string');
    const delta = events.find((e): e is Anthropic.Beta.BetaRawMessageDeltaEvent => e.type === 'message_delta')!;
    expect(delta.usage.iterations!.map((i) => i.type)).to.deep.equal(['compaction', 'message']);
    expect(final.usage.iterations!.map((i) => i.type)).to.deep.equal(['compaction', 'message']);
    expect(final.stop_reason).to.equal('end_turn');
  });

  it('pause_after_compaction answers the compaction block alone (stop_reason compaction, no answer pass), JSON and streamed', async function () {
    this.timeout(30_000);
    const seen = env().sim.log.entries.length;
    const r = await a.beta.messages.create({ model: 'sim-chat', max_tokens: 64, betas: [BETA], messages: longConversation(), context_management: compact({ pause_after_compaction: true }) });
    expect(r.content.map((b) => b.type)).to.deep.equal(['compaction']);
    expect([r.stop_reason, r.usage.input_tokens, r.usage.output_tokens]).to.deep.equal(['compaction', 0, 0]);
    expect(r.usage.iterations!.map((i) => i.type)).to.deep.equal(['compaction']);
    expect(sentBodies(seen), 'the summary pass only').to.have.length(1);
    const stream = a.beta.messages.stream({ model: 'sim-chat', max_tokens: 64, betas: [BETA], messages: longConversation(), context_management: compact({ pause_after_compaction: true }) });
    const final = await stream.finalMessage();
    expect(final.content.map((b) => b.type)).to.deep.equal(['compaction']);
    expect(final.stop_reason).to.equal('compaction');
  });

  it('below the trigger answers as asked, with no compaction; a malformed edit or an empty compaction block is refused (400) before anything is sent or billed', async () => {
    const seen = env().sim.log.entries.length;
    const small = await a.beta.messages.create({ model: 'sim-chat', max_tokens: 64, betas: [BETA], messages: [{ role: 'user', content: 'hi' }], context_management: { edits: [{ type: 'compact_20260112' }] } });
    expect(small.content.map((b) => b.type)).to.deep.equal(['text']);
    expect(sentBodies(seen), 'one call').to.have.length(1);
    await usageSettled();
    const billed = await UsageEvent.count({ where: { orgId: o.org.id } });
    const before = env().sim.log.entries.length;
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ context_management: { edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 1000 } }] } }, 'context_management'],
      [{ context_management: { edits: [{ type: 'compact_20260112', trigger: { type: 'tool_uses', value: 60_000 } }] } }, 'context_management'],
      [{ context_management: { edits: [{ type: 'compact_20260112' }, { type: 'compact_20260112' }] } }, 'context_management'],
      [{ context_management: { edits: [{ type: 'compact_20260112', pause_after_compaction: 'yes' }] } }, 'context_management'],
      [{ messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'compaction', content: '' }] }, { role: 'user', content: 'b' }] }, 'messages.1.content.0'],
    ];
    for (const [extra, param] of bad) {
      const json = { model: 'sim-chat', max_tokens: 16, messages: [{ role: 'user', content: 'x' }], ...extra };
      const r = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01', 'anthropic-beta': BETA }, json });
      expect([r.status, r.body.error?.type], JSON.stringify(extra)).to.deep.equal([400, 'invalid_request_error']);
      expect(r.body.error.message, JSON.stringify(extra)).to.include(param);
    }
    expect(env().sim.log.entries.length, 'nothing sent').to.equal(before);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'nothing billed').to.equal(billed);
    // a failed compaction (null content) is sent back as a no-op
    const noop = await a.beta.messages.create({ model: 'sim-chat', max_tokens: 64, betas: [BETA], messages: [{ role: 'user', content: 'first KEEPME' }, { role: 'assistant', content: [{ type: 'compaction', content: null }, { type: 'text', text: 'ok' }] }, { role: 'user', content: 'second' }] });
    expect(noop.content.map((b) => b.type)).to.deep.equal(['text']);
    expect(sentBodies(before).at(-1)).to.include('KEEPME');
  });
});
