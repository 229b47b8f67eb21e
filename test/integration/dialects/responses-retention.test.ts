import { expect } from 'chai';
import OpenAI from 'openai';
import { QueryTypes } from 'sequelize';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { withSettings } from '../../helpers/settings';
import { StoredResponse } from '../../../shared/db/models';
import { db } from '../../../shared/db/sequelize';
import { expireStoredResponses } from '../../../shared/responses/retention';
import { CLOCK_TASKS, startClock, type ClockTask } from '../../../workers/cron/clock';

const DAY_MS = 86_400_000;

/** Moves a stored response's creation `days` into the past. */
async function age(id: string, days: number): Promise<void> {
  await db().query('UPDATE stored_responses SET created_at = :at WHERE id = :id', { replacements: { id, at: new Date(Date.now() - days * DAY_MS) } });
}

/** What the SDK's call rejects with, or 'answered'. */
const outcome = (p: Promise<unknown>) => p.then(() => 'answered' as const, (e: unknown) => e);

function expectNotFound(err: unknown, what: string): void {
  expect(err, what).to.be.instanceOf(OpenAI.NotFoundError);
  expect((err as InstanceType<typeof OpenAI.NotFoundError>).code, what).to.equal('response_not_found');
}

/** STORED_RESPONSES_RETENTION_DAYS (30 by default, as OpenAI keeps response objects) and the clock's sweep. */
describe('stored responses: kept for the retention, then gone', () => {
  let o: TestOrg;
  let client: OpenAI;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });

  it('answers 404 response_not_found for a response past 30 days (retrieve, input items, delete; a follow-up 400 previous_response_not_found and reaches no upstream); a younger one answers', async () => {
    const old = await client.responses.create({ model: 'sim-chat', input: 'an old question' });
    const young = await client.responses.create({ model: 'sim-chat', input: 'a recent question' });
    await age(old.id, 30.01);
    await age(young.id, 29.9);

    expectNotFound(await outcome(client.responses.retrieve(old.id)), 'retrieve');
    expectNotFound(await outcome(client.responses.inputItems.list(old.id)), 'input items');
    const sent = env().sim.log.entries.length;
    const followUp = await outcome(client.responses.create({ model: 'sim-chat', input: 'go on', previous_response_id: old.id }));
    expect(followUp, 'follow-up').to.be.instanceOf(OpenAI.BadRequestError);
    expect(followUp).to.include({ code: 'previous_response_not_found', param: 'previous_response_id' });
    expect(env().sim.log.entries.length, 'the refused follow-up reached no upstream').to.equal(sent);
    expectNotFound(await outcome(client.responses.delete(old.id)), 'delete');
    expect(await StoredResponse.count({ where: { id: old.id } }), 'the row waits for the sweep').to.equal(1);

    expect((await client.responses.retrieve(young.id)).id).to.equal(young.id);
    expect((await client.responses.inputItems.list(young.id)).data).to.have.length(1);
    const next = await client.responses.create({ model: 'sim-chat', input: 'go on', previous_response_id: young.id });
    expect(next.status).to.equal('completed');
    expect(JSON.stringify(env().sim.log.entries.at(-1)!.body), 'the follow-up carried the young history').to.include('a recent question');
  });

  it('the sweep deletes what is past the retention, oldest first in batches, and keeps the rest', async () => {
    const make = async (days: number) => {
      const r = await client.responses.create({ model: 'sim-chat', input: `${days} days old` });
      await age(r.id, days);
      return r.id;
    };
    const expired = [await make(45), await make(31), await make(400), await make(30.5), await make(60)];
    const kept = [await make(29), await make(1), await make(0)];
    const [{ n }] = await db().query<{ n: number }>("SELECT count(*)::int AS n FROM stored_responses WHERE created_at <= now() - interval '30 days'", { type: QueryTypes.SELECT });
    expect(n).to.be.at.least(expired.length);

    expect(await expireStoredResponses(Date.now(), 2), 'every row past the retention, two a statement').to.equal(n);
    expect(await StoredResponse.count({ where: { id: expired } })).to.equal(0);
    expect(await StoredResponse.count({ where: { id: kept } })).to.equal(kept.length);
    expect(await expireStoredResponses(), 'a second sweep finds nothing').to.equal(0);
    expect((await client.responses.retrieve(kept[0])).id).to.equal(kept[0]);
  });

  it('the clock runs the sweep as its expire-stored-responses task', async () => {
    const r = await client.responses.create({ model: 'sim-chat', input: 'for the clock' });
    await age(r.id, 31);
    const task = CLOCK_TASKS.find((t) => t.name === 'expire-stored-responses');
    expect(task, 'in CLOCK_TASKS').to.not.equal(undefined);
    const clock = startClock(env().redis, [{ ...(task as ClockTask), schedule: '* * * * * *' }]);
    try {
      const until = Date.now() + 10_000;
      while ((await StoredResponse.count({ where: { id: r.id } })) > 0 && Date.now() < until) await new Promise((res) => setTimeout(res, 200));
      expect(await StoredResponse.count({ where: { id: r.id } }), 'swept by the clock').to.equal(0);
    } finally {
      clock.stop();
    }
  });

  it('with STORED_RESPONSES_RETENTION_DAYS=0 a response is kept until deleted, and the sweep removes nothing', async () => {
    const r = await client.responses.create({ model: 'sim-chat', input: 'keep me' });
    await age(r.id, 400);
    await withSettings({ STORED_RESPONSES_RETENTION_DAYS: '0' }, async () => {
      expect((await client.responses.retrieve(r.id)).id).to.equal(r.id);
      expect(await expireStoredResponses()).to.equal(0);
      expect(await StoredResponse.count({ where: { id: r.id } })).to.equal(1);
      expect(await client.responses.delete(r.id)).to.deep.include({ id: r.id, deleted: true });
    });
  });

  it('with STORED_RESPONSES_RETENTION_DAYS=7 a response of 8 days is not found', async () => {
    const r = await client.responses.create({ model: 'sim-chat', input: 'a week' });
    await age(r.id, 8);
    await withSettings({ STORED_RESPONSES_RETENTION_DAYS: '7' }, async () => {
      expectNotFound(await outcome(client.responses.retrieve(r.id)), 'retrieve at 7 days');
    });
    expect((await client.responses.retrieve(r.id)).id, 'within the default 30 days').to.equal(r.id);
  });
});
