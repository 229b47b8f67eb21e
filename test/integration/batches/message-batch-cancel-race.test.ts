import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { QueryTypes } from 'sequelize';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { waitFor } from '../../helpers/wait';
import { usageSettled } from '../../helpers/usage';
import { db } from '../../../shared/db/sequelize';
import { startBatchWorker } from '../../../workers/batch/main';
import { batchUsage, type BatchWorker } from './helpers';

type Batch = Anthropic.Messages.MessageBatch;

/**
 * A cancel racing the end of a Message Batch, on the real runner, Postgres and Redis. Anthropic's
 * document (Cancel a Message Batch): "Batches may be canceled any time before processing ends. Once
 * cancellation is initiated, the batch enters a canceling state, at which time the system may complete
 * any in-progress, non-interruptible requests before finalizing cancellation." The runner here polls
 * only when the test says (`tick`), so each interleaving is the one named, not a timing's luck.
 */
describe('Message Batches: a cancel racing the end of the batch', function () {
  this.timeout(60_000);
  let client: Anthropic;
  let worker: BatchWorker;
  before(async () => {
    const o: TestOrg = await buildOrg(env().redis);
    client = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
    // one line in flight, and no pass but the test's own
    worker = await startBatchWorker({ pollMs: 3_600_000, linesInFlight: 1 });
  });
  after(async () => {
    worker.runner.beforeEnd = undefined;
    await worker?.close();
  });
  beforeEach(resetSim);

  const requests = (n: number, tag: string) =>
    Array.from({ length: n }, (_, i) => ({ custom_id: `${tag}-${i}`, params: { model: 'sim-claude', max_tokens: 8, messages: [{ role: 'user' as const, content: `${tag} ${i}` }] } }));

  /** Runs the runner's passes until the batch has ended. */
  async function passesUntilEnded(id: string): Promise<Batch> {
    const b = await waitFor(async () => {
      await worker.runner.tick();
      const b = await client.messages.batches.retrieve(id);
      return b.processing_status === 'ended' ? b : undefined;
    }, 30_000, 50);
    if (!b) throw new Error(`message batch ${id} did not end: ${JSON.stringify(await client.messages.batches.retrieve(id))}`);
    return b;
  }

  async function resultsOf(id: string): Promise<Anthropic.Messages.MessageBatchIndividualResponse[]> {
    const out: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const r of await client.messages.batches.results(id)) out.push(r);
    return out;
  }

  const lineStates = (id: string) =>
    db().query<{ state: string; n: string }>('SELECT state, count(*) AS n FROM batch_lines WHERE batch_id = :id GROUP BY state', { type: QueryTypes.SELECT, replacements: { id } });

  it('a cancel at the finalize point (every line finished, the batch not ended yet): canceling, then ended, every result kept, counts consistent', async () => {
    const created = await client.messages.batches.create({ requests: requests(3, 'fin') });
    let atCancel: Batch | undefined;
    let from: string | undefined;
    worker.runner.beforeEnd = async (b, f) => {
      if (b.id !== created.id || atCancel) return;
      from = f;
      atCancel = await client.messages.batches.cancel(created.id);
    };
    const done = await passesUntilEnded(created.id);
    expect(from, 'the cancel came in at the end of processing').to.equal('finalizing');
    expect(atCancel, 'cancel answered').to.not.equal(undefined);
    // the cancel was taken, not dropped: the batch is canceling, with the time it was asked
    expect(atCancel!.processing_status).to.equal('canceling');
    expect(atCancel!.cancel_initiated_at).to.be.a('string');
    expect(atCancel!.ended_at).to.equal(null);
    expect(atCancel!.results_url).to.equal(null);
    expect(atCancel!.request_counts).to.deep.equal({ processing: 0, succeeded: 3, errored: 0, canceled: 0, expired: 0 });
    // then ended: what had finished keeps its result (nothing was left to cancel)
    expect(done.cancel_initiated_at).to.equal(atCancel!.cancel_initiated_at);
    expect(Date.parse(done.ended_at!)).to.be.at.least(Date.parse(done.cancel_initiated_at!));
    expect(done.request_counts).to.deep.equal({ processing: 0, succeeded: 3, errored: 0, canceled: 0, expired: 0 });
    const rs = await resultsOf(created.id);
    expect(rs.map((r) => [r.custom_id, r.result.type])).to.deep.equal([['fin-0', 'succeeded'], ['fin-1', 'succeeded'], ['fin-2', 'succeeded']]);
    await usageSettled();
    expect(await batchUsage(created.id), 'each answered line billed once').to.have.length(3);
    // ended: a cancel now is refused, the batch unchanged
    const again = await client.messages.batches.cancel(created.id).catch((e: unknown) => e);
    expect(again).to.be.instanceOf(Anthropic.BadRequestError);
    expect(await client.messages.batches.retrieve(created.id)).to.deep.equal(done);
  });

  it('a cancel while a line is in flight: that line finishes and keeps its result, no other line starts, the rest are canceled', async () => {
    worker.runner.beforeEnd = undefined;
    env().sim.knobs.set('sim-claude-1', { delayMs: 600 });
    const created = await client.messages.batches.create({ requests: requests(5, 'fly') });
    await worker.runner.tick(); // claims one line (one in flight) and sends it
    const running = await waitFor(async () => (await lineStates(created.id)).some((s) => s.state === 'running' && Number(s.n) === 1), 10_000, 20);
    expect(running, 'one line in flight').to.equal(true);
    const c = await client.messages.batches.cancel(created.id);
    expect(c.processing_status).to.equal('canceling');
    expect(c.request_counts.processing, 'nothing finished yet').to.equal(5);
    // the line in flight ends and its runner feeds the batch again at once, from the row it read before the cancel
    await waitFor(async () => !(await lineStates(created.id)).some((s) => s.state === 'running'), 10_000, 20);
    const done = await passesUntilEnded(created.id);
    expect(done.request_counts, 'only the line in flight at the cancel ran').to.deep.equal({ processing: 0, succeeded: 1, errored: 0, canceled: 4, expired: 0 });
    const rs = await resultsOf(created.id);
    expect(rs.map((r) => r.result.type)).to.deep.equal(['succeeded', 'canceled', 'canceled', 'canceled', 'canceled']);
    await usageSettled();
    expect(await batchUsage(created.id), 'the answered line only is billed').to.have.length(1);
  });
});
