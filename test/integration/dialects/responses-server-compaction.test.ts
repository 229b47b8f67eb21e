import { expect } from 'chai';
import OpenAI from 'openai';
import { QueryTypes } from 'sequelize';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';
import { buildOrg } from '../../helpers/factories';
import { expectOpenAI, withoutNullUser } from '../../helpers/conformance';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { UsageEvent } from '../../../shared/db/models';
import { db } from '../../../shared/db/sequelize';
import { decrypt } from '../../../shared/crypto';
import { ended, expectRefused, outcome } from '../../helpers/responses-background';

const words = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ');
type Input = OpenAI.Responses.ResponseInputItem[];
/** A conversation well over 1,000 tokens: a long answer between two user messages. */
const longInput = (): Input => [
  { role: 'user', content: 'remember that the code word is PELICAN' },
  { role: 'assistant', content: `noted. ${words('LONGANSWER', 1400)}` },
  { role: 'user', content: 'what was the code word?' },
];
const sentBodies = (from: number) => env().sim.log.entries.slice(from).map((e) => JSON.stringify(e.body));

/** OpenAI's server-side compaction: `context_management` with `compact_threshold`, and the `compaction_trigger` item. */
describe('responses server-side compaction', () => {
  const s = openaiOrg();

  it('above the threshold the model first summarises the conversation (billed, one Activity row), then answers from its user messages and the summary; the output opens with the compaction item', async () => {
    const o = await buildOrg(env().redis);
    const c = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const seen = env().sim.log.entries.length;
    const r = await c.responses.create({ model: 'sim-chat', input: longInput(), context_management: [{ type: 'compaction', compact_threshold: 1000 }] });
    expectOpenAI('Response', withoutNullUser(JSON.parse(JSON.stringify(r))));
    expect(r.output.map((i) => i.type)).to.deep.equal(['compaction', 'message']);
    const item = r.output[0] as OpenAI.Responses.ResponseCompactionItem;
    expect(item.id).to.match(/^cmp_/);
    expect(JSON.parse(decrypt(item.encrypted_content)).o).to.equal(o.org.id);
    const [pass, answer] = sentBodies(seen);
    expect(pass, 'the summary pass saw the whole conversation').to.include('CONTEXT CHECKPOINT COMPACTION').and.to.include('LONGANSWER1399');
    expect(answer, 'the answer: the user messages and the summary').to.include('Summary of the earlier conversation').and.to.include('PELICAN').and.to.include('what was the code word?');
    expect(answer, 'not the conversation it replaced').to.not.include('LONGANSWER');
    expect(sentBodies(seen), 'two upstream calls').to.have.length(2);
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { orgId: o.org.id } });
    expect(events, 'both passes billed').to.have.length(2);
    const billedInput = events.reduce((n, e) => n + e.inputTokens, 0);
    expect(r.usage!.input_tokens, "the Response's usage counts both").to.equal(billedInput);
    const rows = async () =>
      db().query<{ input_tokens: number }>("SELECT input_tokens FROM request_logs WHERE org_id = :org AND route = '/v1/responses'", { type: QueryTypes.SELECT, replacements: { org: o.org.id } });
    expect(await waitFor(async () => (await rows()).length === 1, 10_000), 'one Activity row').to.equal(true);
    expect((await rows())[0].input_tokens, 'with both passes').to.equal(billedInput);

    const seen2 = env().sim.log.entries.length;
    const next = await c.responses.create({ model: 'sim-chat', input: 'and the colour?', previous_response_id: r.id });
    expect(next.output.map((i) => i.type), 'under the threshold now: no compaction').to.deep.equal(['message']);
    const followUp = sentBodies(seen2);
    expect(followUp, 'one call').to.have.length(1);
    expect(followUp[0], 'a follow-up continues from the compacted context').to.include('Summary of the earlier conversation').and.to.not.include('LONGANSWER');

    const seen3 = env().sim.log.entries.length;
    const chained = await c.responses.create({ model: 'sim-chat', input: [...longInput(), ...(r.output as unknown as Input), { role: 'user', content: 'and the colour?' }] });
    expect(chained.status).to.equal('completed');
    expect(sentBodies(seen3)[0], 'stateless chaining: what came before the compaction item is in its summary, only the user messages are kept').to.include('Summary of the earlier conversation').and.to.include('PELICAN').and.to.not.include('LONGANSWER');
  });

  it('a background response compacts in its run (JSON polled and streamed): the output opens with the compaction item, both passes billed, one Activity row with both, a follow-up continues from the compacted context', async function () {
    this.timeout(30_000);
    const o = await buildOrg(env().redis);
    const c = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const seen = env().sim.log.entries.length;
    const queued = await c.responses.create({ model: 'sim-chat', input: longInput(), background: true, context_management: [{ type: 'compaction', compact_threshold: 1000 }] });
    expect(queued.status).to.equal('queued');
    const r = await ended(c, queued.id);
    expect(r.status).to.equal('completed');
    expect(r.output.map((i) => i.type)).to.deep.equal(['compaction', 'message']);
    const [pass, answer] = sentBodies(seen);
    expect(sentBodies(seen), 'two upstream calls').to.have.length(2);
    expect(pass).to.include('CONTEXT CHECKPOINT COMPACTION').and.to.include('LONGANSWER1399');
    expect(answer).to.include('Summary of the earlier conversation').and.to.include('PELICAN').and.to.not.include('LONGANSWER');
    await usageSettled();
    const events = await UsageEvent.findAll({ where: { orgId: o.org.id } });
    expect(events, 'both passes billed').to.have.length(2);
    const billedInput = events.reduce((n, e) => n + e.inputTokens, 0);
    expect(r.usage!.input_tokens).to.equal(billedInput);
    const rows = async () =>
      db().query<{ input_tokens: number; status: number }>("SELECT input_tokens, status FROM request_logs WHERE org_id = :org AND route = '/v1/responses'", { type: QueryTypes.SELECT, replacements: { org: o.org.id } });
    expect(await waitFor(async () => (await rows()).length === 1, 10_000), 'one Activity row').to.equal(true);
    expect((await rows())[0]).to.deep.equal({ input_tokens: billedInput, status: 200 });

    const seen2 = env().sim.log.entries.length;
    const next = await c.responses.create({ model: 'sim-chat', input: 'and the colour?', previous_response_id: r.id });
    expect(sentBodies(seen2)[0], 'a follow-up continues from the compacted context').to.include('Summary of the earlier conversation').and.to.not.include('LONGANSWER');
    expect(next.status).to.equal('completed');

    const streamed = await c.responses.create({ model: 'sim-chat', input: [{ role: 'user', content: 'short, but compact it' }, { type: 'compaction_trigger' }], background: true, stream: true });
    const types: string[] = [];
    let last: OpenAI.Responses.ResponseStreamEvent | undefined;
    for await (const ev of streamed) {
      if (ev.type === 'response.output_item.added') types.push(ev.item.type);
      last = ev;
    }
    expect(types).to.deep.equal(['compaction', 'message']);
    expect(last!.type).to.equal('response.completed');
    const kept = await c.responses.retrieve((last as OpenAI.Responses.ResponseCompletedEvent).response.id);
    expect(kept.output.map((i) => i.type), 'the stored response').to.deep.equal(['compaction', 'message']);
  });

  it('under the threshold nothing is compacted: one call, the usual output', async () => {
    const seen = env().sim.log.entries.length;
    const r = await s.c.responses.create({ model: 'sim-chat', input: 'a short question', context_management: [{ type: 'compaction', compact_threshold: 1000 }] });
    expect(r.output.map((i) => i.type)).to.deep.equal(['message']);
    expect(sentBodies(seen)).to.have.length(1);
  });

  it('a compaction_trigger item forces it; streamed, the compaction item is output 0 with its added and done events, the answer after it', async () => {
    const seen = env().sim.log.entries.length;
    const stream = await s.c.responses.create({ model: 'sim-chat', input: [{ role: 'user', content: 'short, but compact it' }, { type: 'compaction_trigger' }], stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const ev of stream) events.push(ev);
    const added = events.filter((e) => e.type === 'response.output_item.added') as OpenAI.Responses.ResponseOutputItemAddedEvent[];
    expect(added.map((e) => [e.output_index, e.item.type])).to.deep.equal([
      [0, 'compaction'],
      [1, 'message'],
    ]);
    const done = events.filter((e) => e.type === 'response.output_item.done') as OpenAI.Responses.ResponseOutputItemDoneEvent[];
    expect(done[0].item.type).to.equal('compaction');
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(completed.type).to.equal('response.completed');
    expect(completed.response.output.map((i) => i.type)).to.deep.equal(['compaction', 'message']);
    expect(events.map((e) => e.sequence_number), 'in sequence').to.deep.equal(events.map((_, i) => i));
    expect(sentBodies(seen), 'the pass, then the answer').to.have.length(2);
    expect(sentBodies(seen)[1]).to.include('Summary of the earlier conversation').and.to.not.include('compaction_trigger');
    const counted = await s.c.responses.inputTokens.count({ model: 'sim-chat', input: [{ role: 'user', content: 'x' }, { type: 'compaction_trigger' }] });
    expect(counted.input_tokens, 'input_tokens counts the request without the trigger').to.be.above(0);
  });

  it('refuses a context_management or trigger it cannot serve (400 naming it), before anything is sent or billed', async () => {
    const o = await buildOrg(env().redis);
    const c = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const seen = env().sim.log.entries.length;
    expectRefused(await outcome(c.responses.create({ model: 'sim-chat', input: 'x', context_management: [{ type: 'clear_everything' }] })), 400, 'context_management[0].type');
    expectRefused(await outcome(c.responses.create({ model: 'sim-chat', input: 'x', context_management: [{ type: 'compaction', compact_threshold: 500 }] })), 400, 'context_management[0].compact_threshold');
    expectRefused(await outcome(c.responses.create({ model: 'sim-chat', input: 'x', context_management: [] })), 400, 'context_management');
    expectRefused(await outcome(c.responses.create({ model: 'sim-chat', input: [{ type: 'compaction_trigger' }, { role: 'user', content: 'x' }] })), 400, 'input[0]');
    expectRefused(await outcome(c.responses.create({ model: 'sim-chat', input: [{ type: 'compaction_trigger' }] })), 400, 'input');
    expect(env().sim.log.entries.length, 'nothing sent').to.equal(seen);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'nothing billed').to.equal(0);
  });
});
