import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { batchUsage, batchSuite, parseJsonl } from './helpers';

async function ended(client: Anthropic, id: string, ms = 60_000): Promise<Anthropic.Messages.MessageBatch> {
  const b = await waitFor(async () => {
    const b = await client.messages.batches.retrieve(id);
    return b.processing_status === 'ended' ? b : undefined;
  }, ms, 200);
  if (!b) throw new Error(`message batch ${id} did not end within ${ms} ms`);
  return b;
}

async function results(client: Anthropic, id: string): Promise<Anthropic.Messages.MessageBatchIndividualResponse[]> {
  const out: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
  for await (const r of await client.messages.batches.results(id)) out.push(r);
  return out;
}

describe('Anthropic Message Batches with the official client', function () {
  this.timeout(120_000);
  const s = batchSuite();

  it('a batch of 50: results complete, custom ids match, messages as the synchronous endpoint answers them (on the batch tier), billed once at half price', async () => {
    const requests = Array.from({ length: 50 }, (_, i) => ({
      custom_id: `m-${i}`,
      params: { model: 'sim-claude', max_tokens: 32, messages: [{ role: 'user' as const, content: `message ${i}` }] },
    }));
    const created = await s.anthropic.messages.batches.create({ requests });
    expect(created.type).to.equal('message_batch');
    expect(created.id).to.match(/^msgbatch_/);
    expect(created.processing_status).to.equal('in_progress');
    expect(created.results_url).to.equal(null);
    expect(Date.parse(created.expires_at) - Date.parse(created.created_at)).to.equal(24 * 3600 * 1000);
    const done = await ended(s.anthropic, created.id);
    expect(done.request_counts).to.deep.equal({ processing: 0, succeeded: 50, errored: 0, canceled: 0, expired: 0 });
    expect(done.ended_at).to.be.a('string');
    expect(done.cancel_initiated_at, 'never cancelled').to.equal(null);
    expect(done.archived_at, 'results stay available until the batch is deleted').to.equal(null);
    expect(done.results_url).to.equal(`${env().gw.url}/v1/messages/batches/${created.id}/results`);

    const rs = await results(s.anthropic, created.id);
    expect(rs.map((r) => r.custom_id)).to.deep.equal(requests.map((r) => r.custom_id));
    for (const i of [0, 25, 49]) {
      const sync = await s.anthropic.messages.create(requests[i].params);
      const r = rs[i].result;
      if (r.type !== 'succeeded') throw new Error(`line ${i}: ${r.type}`);
      const { id: _a, ...batched } = r.message;
      const { id: _b, ...direct } = sync;
      // but for the tier that served it (message-batch-tier.test.ts)
      expect(batched).to.deep.equal({ ...direct, usage: { ...direct.usage, service_tier: 'batch' } });
      expect(r.message.model).to.equal('sim-claude');
    }
    await usageSettled();
    const usage = await batchUsage(created.id);
    expect(usage).to.have.length(50);
    for (const u of usage) {
      expect(u.lane).to.equal('background');
      const full = u.input_tokens * 3 + u.output_tokens * 15; // sim-claude's prices
      expect(full + u.units.cost_micros).to.be.closeTo(full * 0.5, 1e-9);
    }

    const page = await s.anthropic.messages.batches.list({ limit: 1 });
    expect(page.data[0].id).to.equal(created.id);
    expect(await s.anthropic.messages.batches.delete(created.id)).to.deep.equal({ id: created.id, type: 'message_batch_deleted' });
    try {
      await s.anthropic.messages.batches.retrieve(created.id);
      expect.fail('deleted');
    } catch (err) {
      expect(err).to.be.instanceOf(Anthropic.NotFoundError);
    }
  });

  it('list pages with after_id (the SDK auto-pages) and before_id, newest first, only this org', async () => {
    const own = await buildOrg(env().redis);
    const mine = new Anthropic({ apiKey: own.key, baseURL: env().gw.url, maxRetries: 0 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await mine.messages.batches.create({ requests: [{ custom_id: `l${i}`, params: { model: 'sim-claude', max_tokens: 4, messages: [{ role: 'user', content: 'x' }] } }] })).id);
    const seen: string[] = [];
    for await (const b of mine.messages.batches.list({ limit: 1 })) seen.push(b.id);
    expect(seen).to.deep.equal([...ids].reverse());
    const before = await mine.messages.batches.list({ before_id: ids[0], limit: 1 });
    expect(before.data.map((b) => b.id)).to.deep.equal([ids[1]]);
    expect(before.has_more).to.equal(true);
    // another org sees none of them, with or without a cursor naming one
    expect((await s.anthropic.messages.batches.list({ limit: 100 })).data.map((b) => b.id)).to.not.include.members(ids);
    expect((await s.anthropic.messages.batches.list({ after_id: ids[2], limit: 100 })).data.map((b) => b.id)).to.not.include.members(ids);
    for (const id of ids) await ended(mine, id);
  });

  it('a request the messages endpoint refuses is an errored result in its error shape, not billed', async () => {
    const b = await s.anthropic.messages.batches.create({
      requests: [
        { custom_id: 'good', params: { model: 'sim-claude', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } },
        { custom_id: 'bad', params: { model: 'sim-claude', messages: [{ role: 'user', content: 'no max_tokens' }] } as never },
      ],
    });
    await ended(s.anthropic, b.id);
    const rs = await results(s.anthropic, b.id);
    expect(rs[0].result.type).to.equal('succeeded');
    const bad = rs[1].result;
    if (bad.type !== 'errored') throw new Error(bad.type);
    expect(bad.error.type).to.equal('error');
    expect(bad.error.error.type).to.equal('invalid_request_error');
    await usageSettled();
    expect(await batchUsage(b.id)).to.have.length(1);

    // the results are JSONL by their content type, as Anthropic's API sends them: the Ruby and PHP SDKs
    // decode the lines only under one (the Ruby SDK's own test of it, lib/anthropic/internal/util.rb)
    const raw = await fetch(`${env().gw.url}/v1/messages/batches/${b.id}/results`, { headers: { 'x-api-key': s.o.key, 'anthropic-version': '2023-06-01', accept: 'application/x-jsonl' } });
    expect(raw.status).to.equal(200);
    const type = raw.headers.get('content-type') ?? '';
    expect(type).to.match(/^application\/x-jsonl(;|$)/);
    expect(type, 'the Ruby SDK reads it as JSONL').to.match(/^application\/(:?x-(?:n|l)djson)|(:?(?:x-)?jsonl)/);
    expect(parseJsonl(await raw.text()).map((l) => l.custom_id)).to.deep.equal(['good', 'bad']);
  });

  it('cancel: what had not started is canceled, the batch ends, results say so', async () => {
    env().sim.knobs.set('sim-claude-1', { delayMs: 150 });
    const requests = Array.from({ length: 40 }, (_, i) => ({ custom_id: `c-${i}`, params: { model: 'sim-claude', max_tokens: 8, messages: [{ role: 'user' as const, content: `c ${i}` }] } }));
    const b = await s.anthropic.messages.batches.create({ requests });
    await waitFor(async () => (await s.anthropic.messages.batches.retrieve(b.id)).request_counts.succeeded >= 3, 30_000, 50);
    const c = await s.anthropic.messages.batches.cancel(b.id);
    expect(['canceling', 'ended']).to.include(c.processing_status);
    expect(c.cancel_initiated_at).to.be.a('string');
    const done = await ended(s.anthropic, b.id);
    // RFC 3339, kept once the batch ended, between its creation and its end
    expect(done.cancel_initiated_at).to.equal(c.cancel_initiated_at);
    expect(new Date(done.cancel_initiated_at!).toISOString()).to.equal(done.cancel_initiated_at);
    expect(Date.parse(done.cancel_initiated_at!)).to.be.within(Date.parse(done.created_at), Date.parse(done.ended_at!));
    expect(done.archived_at).to.equal(null);
    const n = done.request_counts;
    expect(n.succeeded + n.canceled).to.equal(40);
    expect(n.canceled).to.be.greaterThan(0);
    const rs = await results(s.anthropic, b.id);
    expect(rs.filter((r) => r.result.type === 'canceled')).to.have.length(n.canceled);

    // Anthropic: "Batches may be canceled any time before processing ends". An ended batch is refused, unchanged.
    const again = await s.anthropic.messages.batches.cancel(b.id).catch((e: unknown) => e);
    expect(again).to.be.instanceOf(Anthropic.BadRequestError);
    const err = (again as InstanceType<typeof Anthropic.BadRequestError>).error as { error: { type: string; code: string } };
    expect(err.error).to.include({ type: 'invalid_request_error', code: 'batch_not_cancellable' });
    expect(await s.anthropic.messages.batches.retrieve(b.id)).to.deep.equal(done);
    await usageSettled();
    expect(await batchUsage(b.id)).to.have.length(n.succeeded);
  });
});
