import { expect } from 'chai';
import OpenAI from 'openai';
import { QueryTypes } from 'sequelize';
import { env } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { expectOpenAI, withoutNullUser } from '../../helpers/conformance';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { StoredResponse, UsageEvent } from '../../../shared/db/models';
import { BACKGROUND_LEASE_MS, failAbandonedBackground } from '../../../shared/responses/retention';
import { keys } from '../../../shared/redis/keys';
import { db } from '../../../shared/db/sequelize';
import { drainBackground, renewLeases } from '../../../api/routes/responses/background';
import { backgroundSuite, ended, expectRefused, outcome } from '../../helpers/responses-background';
import { revokeApiKey, updateKeyControls } from '../../../shared/tenancy/ops';
import { archiveProject } from '../../../shared/tenancy/projects';

/** A background response created while the simulator holds its answers, once its request has reached the upstream. */
async function heldBackground(c: OpenAI, input: string): Promise<OpenAI.Responses.Response> {
  env().sim.knobs.set('sim-chat-1', { hold: true });
  const seen = env().sim.log.entries.length;
  const made = await c.responses.create({ model: 'sim-chat', input, background: true });
  expect(await waitFor(() => env().sim.log.entries.length > seen, 10_000), 'it reached the upstream').to.equal(true);
  return made;
}

/** An org of one interactive lane, that lane held by a synchronous request the simulator holds. */
async function laneHeld(): Promise<{ small: TestOrg; c: OpenAI; first: Promise<OpenAI.Responses.Response> }> {
  const small = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 1 } });
  const c = new OpenAI({ apiKey: small.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  env().sim.knobs.set('sim-chat-1', { hold: true });
  const first = c.responses.create({ model: 'sim-chat', input: 'holding the lane' });
  expect(await waitFor(() => env().sim.log.entries.length === 1, 10_000), 'the first holds the lane').to.equal(true);
  return { small, c, first };
}

/** OpenAI's background mode: `background: true`, polled with GET, cancelled with POST .../cancel. */
describe('background responses', () => {
  const s = backgroundSuite();

  it('answers queued at once, then runs: polled to completed with the output and usage, billed once, and continued by a follow-up', async function () {
    this.timeout(30_000);
    const fresh = await buildOrg(env().redis);
    const c = new OpenAI({ apiKey: fresh.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    env().sim.knobs.set('sim-chat-1', { delayMs: 300 });
    const made = await c.responses.create({ model: 'sim-chat', input: 'tell me about otters', background: true });
    expect(made).to.deep.include({ status: 'queued', background: true, output: [], usage: null, store: true });
    expectOpenAI('Response', withoutNullUser(JSON.parse(JSON.stringify(made))));

    const done = await ended(c, made.id);
    expect(done.status).to.equal('completed');
    expect(done.background).to.equal(true);
    expect(done.output_text).to.include('otters');
    expect(done.usage!.input_tokens).to.be.above(0);
    expectOpenAI('Response', withoutNullUser(JSON.parse(JSON.stringify(done))));
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: fresh.org.id } }), 'one request, one usage event').to.equal(1);
    const logged = async () =>
      db().query<{ status: number; input_tokens: number; route: string; request_id: string }>("SELECT status, input_tokens, route, request_id FROM request_logs WHERE org_id = :org AND route = '/v1/responses'", { type: QueryTypes.SELECT, replacements: { org: fresh.org.id } });
    expect(await waitFor(async () => (await logged()).some((r) => r.input_tokens > 0), 10_000), 'the Activity row has the run’s tokens').to.equal(true);
    expect((await logged()).map((r) => r.status), 'one row for the request').to.deep.equal([200]);

    const next = await c.responses.create({ model: 'sim-chat', input: 'and beavers?', previous_response_id: made.id });
    expect(next.status).to.equal('completed');
    expect(JSON.stringify(env().sim.log.entries.at(-1)!.body), 'the follow-up carried the background answer').to.include('otters');
  });

  it('cancels a running background response on the pod that runs it, or from another pod: cancelled, its upstream request aborted; again answers it; a late answer does not overwrite it', async function () {
    this.timeout(30_000);
    for (const via of [env().gw.url, s.podB.url]) {
      const made = await heldBackground(s.client, `hold me (${via})`);
      expect((await s.client.responses.retrieve(made.id)).status).to.equal('in_progress');
      const other = new OpenAI({ apiKey: s.o.key, baseURL: `${via}/v1`, maxRetries: 0 });
      const cancelled = await other.responses.cancel(made.id);
      expect(cancelled).to.deep.include({ id: made.id, status: 'cancelled', background: true });
      expect(await waitFor(() => env().sim.log.entries.at(-1)!.aborted === true, 10_000), `the upstream request was aborted (cancel via ${via})`).to.equal(true);
      env().sim.knobs.release();
      await new Promise((r) => setTimeout(r, 300));
      expect((await s.client.responses.retrieve(made.id)).status, 'still cancelled').to.equal('cancelled');
      expect((await other.responses.cancel(made.id)).status, 'a second cancel answers it again').to.equal('cancelled');
      env().sim.knobs.reset();
    }
  });

  it('refuses what background mode cannot do, before anything is stored or billed; cancel refuses a response that was not made in the background or has ended', async function () {
    this.timeout(30_000);
    const fresh = await buildOrg(env().redis);
    const c = new OpenAI({ apiKey: fresh.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    expectRefused(await outcome(c.responses.create({ model: 'sim-chat', input: 'x', background: true, store: false })), 400, 'background');
    expect(await StoredResponse.count({ where: { orgId: fresh.org.id } }), 'nothing stored').to.equal(0);
    expect(env().sim.log.entries, 'nothing sent').to.have.length(0);

    const plain = await c.responses.create({ model: 'sim-chat', input: 'x' });
    expectRefused(await outcome(c.responses.cancel(plain.id)), 400, 'response_id');
    const bg = await c.responses.create({ model: 'sim-chat', input: 'x', background: true });
    expect((await ended(c, bg.id)).status).to.equal('completed');
    expectRefused(await outcome(c.responses.cancel(bg.id)), 400, 'response_id');
    const missing = await outcome(c.responses.cancel('resp_nope'));
    expect((missing as InstanceType<typeof OpenAI.APIError>).status).to.equal(404);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: fresh.org.id } }), 'only the two answered requests').to.equal(2);
  });

  it('a follow-up naming a background response that has not ended is refused; an upstream failure ends it failed with the error', async function () {
    this.timeout(30_000);
    const made = await heldBackground(s.client, 'slow');
    expectRefused(await outcome(s.client.responses.create({ model: 'sim-chat', input: 'next', previous_response_id: made.id })), 400, 'previous_response_id');
    env().sim.knobs.release();
    expect((await ended(s.client, made.id)).status).to.equal('completed');
    env().sim.knobs.reset();

    const fresh = await buildOrg(env().redis);
    const c = new OpenAI({ apiKey: fresh.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    env().sim.knobs.set('sim-chat-1', { status: 400 });
    const bad = await c.responses.create({ model: 'sim-chat', input: 'refused upstream', background: true });
    const failed = await ended(c, bad.id);
    expect(failed.status).to.equal('failed');
    expect(failed.error).to.have.property('message').that.is.a('string');
    const rows = async () =>
      db().query<{ status: number }>("SELECT status FROM request_logs WHERE org_id = :org AND route = '/v1/responses'", { type: QueryTypes.SELECT, replacements: { org: fresh.org.id } });
    expect(await waitFor(async () => (await rows()).length === 1, 10_000), 'the create has one Activity row').to.equal(true);
    expect((await rows())[0].status, 'with the run’s failure').to.equal(400);
  });

  it('waits for a lane when its org’s lanes are full, instead of failing, and runs once one frees', async function () {
    this.timeout(30_000);
    const { c, first } = await laneHeld();
    const made = await c.responses.create({ model: 'sim-chat', input: 'waiting for a lane', background: true });
    await new Promise((r) => setTimeout(r, 1500));
    expect((await c.responses.retrieve(made.id)).status, 'still waiting, not failed').to.be.oneOf(['queued', 'in_progress']);
    expect(env().sim.log.entries, 'not sent while the lane is full').to.have.length(1);
    env().sim.knobs.reset();
    env().sim.knobs.release();
    expect((await first).status).to.equal('completed');
    const done = await ended(c, made.id);
    expect(done.status).to.equal('completed');
    expect(done.output_text).to.include('waiting for a lane');
  });

  it('cancelled from another pod while it waits for a lane, it never runs', async function () {
    this.timeout(30_000);
    const { small, c, first } = await laneHeld();
    const made = await c.responses.create({ model: 'sim-chat', input: 'never sent', background: true });
    await new Promise((r) => setTimeout(r, 300));
    const viaB = new OpenAI({ apiKey: small.key, baseURL: `${s.podB.url}/v1`, maxRetries: 0 });
    expect((await viaB.responses.cancel(made.id)).status).to.equal('cancelled');
    env().sim.knobs.reset();
    env().sim.knobs.release();
    expect((await first).status).to.equal('completed');
    await new Promise((r) => setTimeout(r, 2500)); // past its next try for a lane
    expect(env().sim.log.entries.map((e) => JSON.stringify(e.body)).join(' '), 'never sent upstream').to.not.include('never sent');
    expect((await c.responses.retrieve(made.id)).status).to.equal('cancelled');
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: small.org.id } }), 'only the first billed').to.equal(1);
  });

  it('its key revoked, given a budget it cannot fit, or its project archived, while it waits for a lane: it never runs, failed with that error, nothing billed (as a batch line or a resumed response is)', async function () {
    this.timeout(40_000);
    const changes: Array<[string, (o: TestOrg) => Promise<unknown>, RegExp]> = [
      ['a revoked key made me', (o) => revokeApiKey(env().redis, o.keyId), /API key that made this background response no longer works/],
      // a key that still works runs it under its controls of now, not those read when it was made
      ['over the new budget', (o) => updateKeyControls(env().redis, o.keyId, { budgetMicros: 0, budgetPeriod: 'day' }), /budget/],
      // made in a project (SERVICE-PROJECT-ID) that an owner archives meanwhile
      ['my project was archived', (o) => archiveProject(env().redis, o.org.id, o.project.id), /project this was made in has been archived/],
    ];
    for (const [input, change, error] of changes) {
      const { small, c, first } = await laneHeld();
      const made = await c.responses.create({ model: 'sim-chat', input, background: true }, { headers: { 'SERVICE-PROJECT-ID': 'proj' } });
      await new Promise((r) => setTimeout(r, 300));
      await change(small);
      env().sim.knobs.reset();
      env().sim.knobs.release();
      await first;
      const row = await waitFor(async () => {
        const r = await StoredResponse.findOne({ where: { id: made.id } });
        return r && !['queued', 'in_progress'].includes(String(r.response.status)) ? r : undefined;
      }, 10_000);
      expect(row?.response.status, input).to.equal('failed');
      expect((row!.response.error as { message: string }).message).to.match(error);
      expect(env().sim.log.entries.map((e) => JSON.stringify(e.body)).join(' '), 'never sent upstream').to.not.include(input);
      await usageSettled();
      expect(await UsageEvent.count({ where: { orgId: small.org.id } }), 'only the first billed').to.equal(1);
      env().sim.log.entries.length = 0;
    }
  });

  it('a stopping pod lets its background responses run a while, then ends a streamed one failed (send it again; a polled one is resumed elsewhere: responses-background-resume)', async function () {
    this.timeout(30_000);
    // streamed: its events went to its followers, so it is not resumed on another pod
    env().sim.knobs.set('sim-chat-1', { hold: true });
    const seen = env().sim.log.entries.length;
    const stream = await s.client.responses.create({ model: 'sim-chat', input: 'cut by a shutdown', background: true, stream: true });
    let id = '';
    for await (const ev of stream) {
      if (ev.type === 'response.created') id = ev.response.id;
      if (ev.type === 'response.queued') break;
    }
    expect(await waitFor(() => env().sim.log.entries.length > seen, 10_000), 'it reached the upstream').to.equal(true);
    expect(await env().redis.exists(keys.backgroundResume(id)), 'a streamed run’s request is not kept').to.equal(0);
    const t = Date.now();
    await drainBackground(env().gw.ctx, 300);
    expect(Date.now() - t, 'it waited its grace').to.be.at.least(280);
    const r = await s.client.responses.retrieve(id);
    expect(r.status).to.equal('failed');
    expect(r.error!.message).to.match(/send it again/);
    expect(await waitFor(() => env().sim.log.entries.at(-1)!.aborted === true, 10_000), 'its upstream request was aborted').to.equal(true);
  });

  it("the clock fails a background response whose pod's lease lapsed (the pod was lost), and leaves one whose lease is renewed", async function () {
    this.timeout(30_000);
    const lostRow = async (id: string) => {
      await StoredResponse.create({ id, orgId: s.o.org.id, projectId: null, apiKeyId: s.o.keyId, model: 'sim-chat', conversation: [], response: { id, object: 'response', status: 'in_progress', background: true, output: [] } });
      await db().query("UPDATE stored_responses SET created_at = now() - interval '2 minutes' WHERE id = :id", { replacements: { id } });
    };
    const lost = `resp_lost_${Date.now()}`;
    const leased = `resp_leased_${Date.now()}`;
    await lostRow(lost);
    await lostRow(leased);
    await env().redis.set(keys.backgroundJob(leased), 'chat-interactive job', 'PX', 5_000); // another pod's live lease
    const running = await heldBackground(s.client, 'running here');
    const lease = await env().redis.get(keys.backgroundJob(running.id));
    await env().redis.pexpire(keys.backgroundJob(running.id), 2_000);
    await renewLeases(env().gw.ctx);
    expect(await env().redis.pttl(keys.backgroundJob(running.id)), 'the pod renewed its lease').to.be.above(BACKGROUND_LEASE_MS - 5_000);
    await db().query("UPDATE stored_responses SET created_at = now() - interval '2 minutes' WHERE id = :id", { replacements: { id: running.id } });

    // Redis restarted without its data: the leases are gone, and the first sweep fails nothing
    await env().redis.del(keys.backgroundSweepArmed(), keys.backgroundJob(running.id));
    expect(await failAbandonedBackground(env().redis), 'Redis lost its data: the pods have not renewed yet').to.equal(0);
    expect((await StoredResponse.findByPk(lost))!.response.status).to.equal('in_progress');
    await renewLeases(env().gw.ctx);
    expect(await env().redis.get(keys.backgroundJob(running.id)), 'a renewal writes a lost lease back, with its job').to.equal(lease);
    expect(lease).to.match(/^chat-\S+ \S+$/);

    expect(await failAbandonedBackground(env().redis), 'only the lapsed one').to.equal(1);
    const row = await StoredResponse.findByPk(lost);
    expect(row!.response).to.deep.include({ status: 'failed' });
    expect((row!.response.error as { code: string }).code).to.equal('server_error');
    expect((await StoredResponse.findByPk(leased))!.response.status, 'a lease held elsewhere').to.equal('in_progress');
    expect((await s.client.responses.retrieve(running.id)).status, 'a run of this pod').to.equal('in_progress');
    await env().redis.del(keys.backgroundJob(leased));
    expect(await failAbandonedBackground(env().redis), 'once its lease is gone').to.equal(1);
    env().sim.knobs.reset();
    env().sim.knobs.release();
    expect((await ended(s.client, running.id)).status, 'the pod’s own run completes').to.equal('completed');
    expect(await env().redis.exists(keys.backgroundJob(running.id)), 'its lease ends with it').to.equal(0);
  });
});
