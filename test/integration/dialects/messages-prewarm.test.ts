import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env } from '../../helpers/harness';
import { call, keyHeader } from '../../helpers/http';
import { buildOrg } from '../../helpers/factories';
import { updateKeyControls } from '../../../shared/tenancy/ops';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { UsageEvent } from '../../../shared/db/models';
import { batchSuite } from '../batches/helpers';

const V = { 'anthropic-version': '2023-06-01' };
const system = [{ type: 'text' as const, text: 'A long, stable system prompt to cache.', cache_control: { type: 'ephemeral' as const } }];
const messages = [{ role: 'user' as const, content: 'warm the cache' }];

/**
 * `max_tokens: 0` is Anthropic's prompt-cache pre-warming (SDK 1.16 MessageCreateParamsBase.max_tokens:
 * "Set to `0` to populate the prompt cache without generating a response"). The gateway answered
 * 400 "'max_tokens' must be greater than or equal to 1" on every upstream. Now an Anthropic-native
 * upstream is sent it as 0 (also from a budgeted key, whose held cap used to replace a missing or
 * zero cap), and elsewhere it is refused by name before anything is sent or billed: a translated
 * upstream cannot pre-warm, and Anthropic's batch guide refuses it inside a batch.
 */
describe('messages dialect: max_tokens 0 (prompt-cache pre-warming)', function () {
  this.timeout(60_000);
  const s = batchSuite();

  it('reaches an Anthropic-native upstream as 0 and answers its empty message (official client); a budgeted key sends 0, not its held cap', async () => {
    const before = await UsageEvent.count({ where: { orgId: s.o.org.id } });
    const m = await s.anthropic.messages.create({ model: 'sim-claude', max_tokens: 0, system, messages });
    expect(m.content).to.deep.equal([]);
    expect(m.stop_reason).to.equal('max_tokens');
    expect(m.usage.output_tokens).to.equal(0);
    expect(m.usage.input_tokens).to.be.greaterThan(0);
    const budgeted = await buildOrg(env().redis);
    await updateKeyControls(env().redis, budgeted.keyId, { budgetMicros: 10_000_000, budgetPeriod: 'day' });
    const r = await call('POST', '/v1/messages', { headers: { ...keyHeader(budgeted.key), ...V }, json: { model: 'sim-claude', max_tokens: 0, system, messages } });
    expect(r.status, r.text).to.equal(200);
    expect(env().sim.log.entries.map((e) => (e.body as { max_tokens: number }).max_tokens)).to.deep.equal([0, 0]);
    await usageSettled();
    const [event] = await UsageEvent.findAll({ where: { orgId: s.o.org.id }, order: [['createdAt', 'DESC']], limit: 1 });
    expect(await UsageEvent.count({ where: { orgId: s.o.org.id } })).to.equal(before + 1);
    expect([event.inputTokens > 0, event.outputTokens]).to.deep.equal([true, 0]);
  });

  it('is refused 400 naming max_tokens on a translated upstream, JSON and streamed, and with the hosted web search; nothing sent or billed; below 0 is invalid everywhere', async () => {
    const before = await UsageEvent.count({ where: { orgId: s.o.org.id } });
    for (const stream of [false, true]) {
      const err = await s.anthropic.messages.create({ model: 'sim-chat', max_tokens: 0, system, messages, stream }).then(() => undefined, (e: unknown) => e);
      expect(err, `stream=${stream}`).to.be.instanceOf(Anthropic.BadRequestError);
      const e = (err as InstanceType<typeof Anthropic.BadRequestError>).error as { error: { code: string; type: string; message: string } };
      expect(e.error).to.include({ code: 'unsupported_parameter', type: 'invalid_request_error' });
      expect(e.error.message).to.include('Anthropic-native upstream');
    }
    const search = await call('POST', '/v1/messages', { headers: { ...keyHeader(s.o.key), ...V }, json: { model: 'sim-claude', max_tokens: 0, messages, tools: [{ type: 'web_search_20250305', name: 'web_search' }] } });
    expect(search.status, search.text).to.equal(400);
    expect(search.body.error).to.include({ code: 'unsupported_parameter' });
    for (const model of ['sim-chat', 'sim-claude']) {
      const r = await call('POST', '/v1/messages', { headers: { ...keyHeader(s.o.key), ...V }, json: { model, max_tokens: -1, messages } });
      expect(r.status, r.text).to.equal(400);
      expect(r.body.error).to.include({ code: 'invalid_request' });
    }
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: s.o.org.id } })).to.equal(before);
  });

  it('a message batch line with max_tokens 0 is errored (not supported inside a batch), the other line succeeds', async () => {
    const batch = await s.anthropic.messages.batches.create({
      requests: [
        { custom_id: 'warm', params: { model: 'sim-claude', max_tokens: 0, system, messages } },
        { custom_id: 'ask', params: { model: 'sim-claude', max_tokens: 8, messages } },
      ],
    });
    await waitFor(async () => (await s.anthropic.messages.batches.retrieve(batch.id)).processing_status === 'ended', 30_000, 200);
    const results: Record<string, Anthropic.Messages.MessageBatchResult> = {};
    for await (const r of await s.anthropic.messages.batches.results(batch.id)) results[r.custom_id] = r.result;
    expect(results.ask.type).to.equal('succeeded');
    expect(results.warm.type).to.equal('errored');
    const err = (results.warm as Anthropic.Messages.MessageBatchErroredResult).error.error;
    expect(err.type).to.equal('invalid_request_error');
    expect(err.message).to.include('not supported in a message batch');
    expect(env().sim.log.entries.map((e) => (e.body as { max_tokens: number }).max_tokens)).to.deep.equal([8]);
  });
});
