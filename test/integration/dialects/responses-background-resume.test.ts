import { expect } from 'chai';
import OpenAI from 'openai';
import { QueryTypes } from 'sequelize';
import { env } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { kill, spawnWeb } from '../../helpers/processes';
import { StoredResponse, UsageEvent } from '../../../shared/db/models';
import { ADOPT_GRACE_MS, RESUME_MAX, failAbandonedBackground } from '../../../shared/responses/retention';
import { keys } from '../../../shared/redis/keys';
import { db } from '../../../shared/db/sequelize';
import { revokeApiKey } from '../../../shared/tenancy/ops';
import { drainBackground } from '../../../api/routes/responses/background';
import { adoptLapsed } from '../../../api/routes/responses/background-resume';
import { backgroundSuite, ended } from '../../helpers/responses-background';

/** A fresh org and its client on `url` (the in-process pod by default). */
async function orgAt(url = env().gw.url): Promise<{ o: TestOrg; c: OpenAI }> {
  const o = await buildOrg(env().redis);
  return { o, c: new OpenAI({ apiKey: o.key, baseURL: `${url}/v1`, maxRetries: 0 }) };
}

/** A background response made while the simulator holds its answers, once its request reached the upstream. */
async function held(c: OpenAI, input: string): Promise<OpenAI.Responses.Response & { requestId: string | null }> {
  env().sim.knobs.set('sim-chat-1', { hold: true });
  const seen = env().sim.log.entries.length;
  const { data, request_id } = await c.responses.create({ model: 'sim-chat', input, background: true }).withResponse();
  expect(await waitFor(() => env().sim.log.entries.length > seen, 10_000), 'it reached the upstream').to.equal(true);
  return Object.assign(data, { requestId: request_id });
}

/** The pods look only at responses older than a margin: the test's response is made older. */
const aged = (id: string) => db().query("UPDATE stored_responses SET created_at = now() - interval '2 minutes' WHERE id = :id", { replacements: { id } });

type Row = { status: number; request_id: string; input_tokens: number; output_tokens: number; error_code: string | null; api_key_id: string | null; model: string; cost_micros: string };
const rowsOf = (orgId: string) =>
  db().query<Row>("SELECT status, request_id, input_tokens, output_tokens, error_code, api_key_id, model, cost_micros FROM request_logs WHERE org_id = :org AND route = '/v1/responses'", {
    type: QueryTypes.SELECT,
    replacements: { org: orgId },
  });

/** A response made in the background goes on when the pod running it stops or is lost: another pod resumes it. */
describe('background responses resumed on another pod', () => {
  const s = backgroundSuite();

  it('a stopping pod hands its run to another: resumed there as the same request, completed, one Activity row, billed once', async function () {
    this.timeout(40_000);
    const { o, c } = await orgAt();
    const made = await held(c, 'tell me about otters');
    await drainBackground(env().gw.ctx, 100);
    expect(await waitFor(() => env().sim.log.entries.at(-1)!.aborted === true, 10_000), 'the stopping pod aborted its upstream request').to.equal(true);
    const after = await c.responses.retrieve(made.id);
    expect(after.status, 'handed off, not failed').to.equal('in_progress');
    expect(await env().redis.exists(keys.backgroundJob(made.id)), 'its lease is given up at once').to.equal(0);

    await aged(made.id);
    const seen = env().sim.log.entries.length;
    env().sim.knobs.reset();
    expect(await adoptLapsed(s.podB.ctx), 'the other pod takes it').to.equal(1);
    expect(await adoptLapsed(env().gw.ctx), 'once').to.equal(0);
    const done = await ended(c, made.id);
    expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    expect([done.id, done.created_at, done.background]).to.deep.equal([made.id, made.created_at, true]);
    expect(done.output_text).to.include('otters');
    expect(env().sim.log.entries.length - seen, 'sent upstream again once').to.equal(1);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'billed once').to.equal(1);
    expect(await waitFor(async () => (await rowsOf(o.org.id)).some((r) => r.input_tokens > 0), 10_000), 'the Activity row has its tokens').to.equal(true);
    expect((await rowsOf(o.org.id)).map((r) => [r.status, r.request_id]), 'one row, the resumed request’s').to.deep.equal([[200, `${made.requestId}.r1`]]);
    expect(await env().redis.exists(keys.backgroundResume(made.id)), 'its kept request is gone with it').to.equal(0);
  });

  it('resumed twice: the second pod stopping too hands it on again, its own job cancelled, the third run completes it', async function () {
    this.timeout(40_000);
    const { o, c } = await orgAt();
    const made = await held(c, 'tell me about otters twice');
    await drainBackground(env().gw.ctx, 50);
    await aged(made.id);
    const seen = env().sim.log.entries.length;
    expect(await adoptLapsed(s.podB.ctx)).to.equal(1);
    expect(await waitFor(() => env().sim.log.entries.length > seen, 10_000), 'the resumed run reached the upstream (held)').to.equal(true);
    expect(await env().redis.hget(keys.backgroundResume(made.id), 'j'), 'its job named for the next resume').to.match(/^chat-\S+ req_\w+\.r1$/);
    await drainBackground(s.podB.ctx, 50);
    expect(await waitFor(() => env().sim.log.entries[seen].aborted === true, 10_000), 'the second pod’s run stopped').to.equal(true);
    env().sim.knobs.reset();
    expect(await adoptLapsed(env().gw.ctx)).to.equal(1);
    const done = await ended(c, made.id);
    expect(done.status).to.equal('completed');
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'only the run that answered is billed').to.equal(1);
    expect(await waitFor(async () => (await rowsOf(o.org.id)).some((r) => r.input_tokens > 0), 10_000)).to.equal(true);
    expect((await rowsOf(o.org.id)).map((r) => r.request_id)).to.deep.equal([`${made.requestId}.r2`]);
  });

  it('a pod process killed mid-run: its lease lapses and a live pod resumes the response to completed', async function () {
    this.timeout(60_000);
    const lost = await spawnWeb({}, 'ignore');
    try {
      const { o, c } = await orgAt(lost.url);
      const made = await held(c, 'tell me about beavers');
      expect(await env().redis.hget(keys.backgroundResume(made.id), 'n'), 'its request is kept to resume it').to.equal('0');
      await kill(lost.child);
      // the lease would lapse within a minute: gone now
      await env().redis.del(keys.backgroundJob(made.id));
      await aged(made.id);
      const seen = env().sim.log.entries.length;
      expect(await adoptLapsed(env().gw.ctx)).to.equal(1);
      expect(await waitFor(() => env().sim.log.entries[seen - 1].aborted === true, 10_000), 'the lost pod’s job, still at its worker, is cancelled').to.equal(true);
      env().sim.knobs.reset(); // the resumed request's answer goes
      const live = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
      const done = await ended(live, made.id);
      expect(done.status).to.equal('completed');
      expect(done.output_text).to.include('beavers');
      expect(env().sim.log.entries.length - seen, 'sent upstream again once').to.equal(1);
      await usageSettled();
      expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'billed once').to.equal(1);
      expect(await waitFor(async () => (await rowsOf(o.org.id)).length === 1 && (await rowsOf(o.org.id))[0].input_tokens > 0, 10_000), 'one Activity row').to.equal(true);
    } finally {
      await kill(lost.child);
    }
  });

  it('not resumed: a key revoked meanwhile fails it with the key’s error; a cancel while it waits forgets it', async function () {
    this.timeout(40_000);
    // revoked while no pod ran it
    const { o, c } = await orgAt();
    const made = await held(c, 'revoked meanwhile');
    await drainBackground(env().gw.ctx, 50);
    await revokeApiKey(env().redis, o.keyId);
    await aged(made.id);
    env().sim.knobs.reset();
    const seen = env().sim.log.entries.length;
    expect(await adoptLapsed(s.podB.ctx)).to.equal(1);
    expect(await waitFor(async () => (await StoredResponse.findByPk(made.id))!.response.status === 'failed', 10_000)).to.equal(true);
    const failed = (await StoredResponse.findByPk(made.id))!.response;
    expect((failed.error as { code: string }).code).to.equal('INVALID_API_KEY');
    expect(env().sim.log.entries.length, 'nothing sent upstream').to.equal(seen);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'nothing billed').to.equal(0);
    // its Activity row: the resumed request's, refused with the key's error, no tokens, no cost
    expect(await waitFor(async () => (await rowsOf(o.org.id)).length > 0, 10_000), 'an Activity row').to.equal(true);
    const rows = (await rowsOf(o.org.id)).map((r) => [r.request_id, r.status, r.error_code, r.api_key_id, r.model, r.input_tokens, r.output_tokens, Number(r.cost_micros)]);
    expect(rows).to.deep.equal([[`${made.requestId}.r1`, 401, 'INVALID_API_KEY', o.keyId, 'sim-chat', 0, 0, 0]]);

    // cancelled while handed off: nothing resumes it
    const other = await orgAt();
    const cut = await held(other.c, 'cancelled meanwhile');
    await drainBackground(env().gw.ctx, 50);
    expect((await other.c.responses.cancel(cut.id)).status).to.equal('cancelled');
    await aged(cut.id);
    expect(await env().redis.exists(keys.backgroundResume(cut.id)), 'a cancel forgets its request').to.equal(0);
    expect(await adoptLapsed(s.podB.ctx)).to.equal(0);
    expect((await other.c.responses.retrieve(cut.id)).status).to.equal('cancelled');

  });

  it('the clock leaves a resumable lapsed response to the pods for a while, then fails it; one resumed too often is failed at once', async function () {
    this.timeout(30_000);
    const { c } = await orgAt();
    const made = await held(c, 'nobody resumes it');
    await drainBackground(env().gw.ctx, 50);
    await aged(made.id);
    env().sim.knobs.reset();
    env().sim.knobs.release();
    await env().redis.set(keys.backgroundSweepArmed(), '1');
    const now = Date.now();
    expect(await failAbandonedBackground(env().redis, now), 'left to the pods').to.equal(0);
    expect((await c.responses.retrieve(made.id)).status).to.equal('in_progress');
    expect(await failAbandonedBackground(env().redis, now + ADOPT_GRACE_MS / 2), 'still').to.equal(0);
    expect(await failAbandonedBackground(env().redis, now + ADOPT_GRACE_MS + 1), 'no pod resumed it in the grace').to.equal(1);
    expect((await c.responses.retrieve(made.id)).status).to.equal('failed');
    expect(await env().redis.exists(keys.backgroundResume(made.id))).to.equal(0);

    const again = await held(c, 'resumed too often');
    await drainBackground(env().gw.ctx, 50);
    await aged(again.id);
    env().sim.knobs.reset();
    env().sim.knobs.release();
    await env().redis.hset(keys.backgroundResume(again.id), 'n', String(RESUME_MAX));
    expect(await adoptLapsed(s.podB.ctx), 'a pod does not take it again').to.equal(0);
    expect(await failAbandonedBackground(env().redis), 'the clock fails it').to.equal(1);
    expect((await c.responses.retrieve(again.id)).status).to.equal('failed');
  });

  it('the public app ignores a ticket header: a request needs its key', async () => {
    const res = await fetch(`${env().gw.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-gateway-ticket': 'a'.repeat(32) }, body: JSON.stringify({ model: 'sim-chat', input: 'hi', background: true }) });
    expect(res.status).to.equal(401);
  });
});
