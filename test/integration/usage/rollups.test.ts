import crypto from 'crypto';
import { expect } from 'chai';
import { QueryTypes } from 'sequelize';
import { adminCall, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { withSettings } from '../../helpers/settings';
import { db } from '../../../shared/db/sequelize';
import { insertUsage } from '../../../shared/metering/usage';
import { addDays, dayStart, rollupDay, SETTLE_MS, utcDay } from '../../../shared/metering/rollups';
import { CATCH_UP_DAYS, rollupUsage } from '../../../workers/cron/rollup-usage';
import { CLOCK_TASKS } from '../../../workers/cron/clock';
import { execFile } from 'child_process';
import path from 'path';
import { promisify } from 'util';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../../../scripts/cli.js');
const gateway = (...args: string[]) => run(process.execPath, [cli, ...args], { env: process.env });

const HOUR = 3_600_000;
const tag = crypto.randomBytes(4).toString('hex');
const models = [`rollup-a-${tag}`, `rollup-b-${tag}`];
const orgs = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
const today = utcDay(new Date());
const at = (day: string, hour: number) => new Date(dayStart(day).getTime() + hour * HOUR);

/** Records one event straight into Postgres (insertUsage) with an explicit request id, then dates it with SQL. */
async function event(when: Date | null, e: { org: number; model: number; modality: string; input?: number; output?: number; units?: Record<string, number>; passthrough?: boolean }): Promise<string> {
  const requestId = `req_rollup_${crypto.randomBytes(8).toString('hex')}`;
  await insertUsage({ requestId, orgId: orgs[e.org], projectId: null, apiKeyId: null, model: models[e.model], modality: e.modality, lane: null, inputTokens: e.input, outputTokens: e.output, units: e.units, passthrough: e.passthrough });
  if (when) await db().query('UPDATE usage_events SET created_at = :when WHERE request_id = :requestId', { replacements: { when: when.toISOString(), requestId } });
  return requestId;
}

/** The all-events query the usage-stats endpoint ran before rollups existed, kept here as the reference. */
async function reference(q: { group_by: string; org_id?: string; model?: string; modality?: string; from?: string; to?: string }): Promise<unknown[]> {
  const GROUPS = { org: 'org_id', model: 'model', day: "to_char(date_trunc('day', created_at), 'YYYY-MM-DD')", modality: 'modality' } as const;
  const groups = [...new Set(q.group_by.split(','))] as Array<keyof typeof GROUPS>;
  const where: string[] = [];
  if (q.org_id) where.push('org_id = :org_id');
  if (q.model) where.push('model = :model');
  if (q.modality) where.push('modality = :modality');
  if (q.from) where.push('created_at >= :from');
  if (q.to) where.push('created_at < :to');
  const rows = await db().query<Record<string, unknown>>(
    `SELECT ${groups.map((g) => `${GROUPS[g]} AS ${g}`).join(', ')}, count(*) AS requests, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
            sum(coalesce((units->>'audio_duration_ms')::bigint, 0)) AS audio_duration_ms,
            count(*) FILTER (WHERE passthrough) AS passthrough_requests
       FROM usage_events ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      GROUP BY ${groups.map((_, i) => i + 1).join(', ')} ORDER BY ${groups.map((_, i) => i + 1).join(', ')} LIMIT 1000`,
    { type: QueryTypes.SELECT, replacements: { ...q } },
  );
  const n = (v: unknown) => Number(v ?? 0);
  return rows.map((r) => ({
    ...Object.fromEntries(groups.map((g) => [g === 'org' ? 'org_id' : g, r[g]])),
    requests: n(r.requests), input_tokens: n(r.input_tokens), output_tokens: n(r.output_tokens), audio_duration_ms: n(r.audio_duration_ms), passthrough_requests: n(r.passthrough_requests),
  }));
}

async function referenceStats(days: number) {
  const [r] = await db().query<Record<string, unknown>>(
    `SELECT count(u.*) AS requests, coalesce(sum(u.input_tokens), 0) AS input_tokens, coalesce(sum(u.output_tokens), 0) AS output_tokens,
            count(DISTINCT u.org_id) AS active_organizations
       FROM usage_events u WHERE u.created_at >= now() - make_interval(days => :days)`,
    { type: QueryTypes.SELECT, replacements: { days } },
  );
  return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Number(v)]));
}

describe('usage rollups: the clock task and the stats family', () => {
  let admin: Awaited<ReturnType<typeof startAdmin>>;
  let key: string;
  const days = [5, 4, 3, 2, 1].map((n) => addDays(today, -n));
  before(async () => {
    admin = await startAdmin();
    key = (await buildPlatformKey(['stats:read'])).key;
    // several days, orgs, models, modalities; hours 1..22 keep clear of midnight
    for (const [i, day] of days.entries()) {
      await event(at(day, 1), { org: 0, model: 0, modality: 'chat', input: 10 + i, output: 5 });
      await event(at(day, 7), { org: 0, model: 0, modality: 'chat', input: 3, output: 4, passthrough: true, units: { cost_micros: 120 + i } });
      await event(at(day, 9), { org: 1, model: 0, modality: 'audio', input: 0, output: 12, units: { audio_duration_ms: 1500 + i, cost_micros: 40 } });
      await event(at(day, 13), { org: 1, model: 1, modality: 'audio', units: { audio_duration_ms: 2500 } });
      await event(at(day, 17), { org: 2, model: 1, modality: 'images', units: { images: 2, image_megapixels: 1.5 } });
      if (i % 2) await event(at(day, 22), { org: 2, model: 1, modality: 'search', input: 7, units: { search_units: 3, cost_micros: 9 } });
    }
    await event(null, { org: 0, model: 0, modality: 'chat', input: 100, output: 50 });
    await event(null, { org: 1, model: 1, modality: 'audio', units: { audio_duration_ms: 999 } });
  });
  after(() => admin.close());
  const get = (path: string) => adminCall(admin.url, key, 'GET', `/admin/v1${path}`);
  type Q = { group_by: string; org_id?: string; model?: string; modality?: string; from?: string; to?: string };
  const queries = (): Q[] => [
    { group_by: 'org', model: models[0] },
    { group_by: 'org', model: models[1] },
    { group_by: 'day,model', org_id: orgs[0] },
    { group_by: 'org,model,day,modality', org_id: orgs[1] },
    { group_by: 'org,model,day,modality', org_id: orgs[2] },
    { group_by: 'modality,model', org_id: orgs[2], from: at(days[1], 12).toISOString(), to: at(days[3], 20).toISOString() },
    { group_by: 'day', model: models[1], from: `${days[0]}T00:00:00.000Z`, to: `${days[4]}T00:00:00.000Z` },
    { group_by: 'day,modality', modality: 'audio', model: models[0], from: at(days[2], 3).toISOString() },
    { group_by: 'model', org_id: orgs[0], to: at(days[2], 8).toISOString() },
    { group_by: 'day,org', model: models[0], from: `${days[1]}T06:30`, to: `${days[3]}T09:00:00` }, // zoneless: UTC
  ];
  async function expectSameAsEvents(): Promise<void> {
    for (const q of queries()) {
      const r = await get(`/usage-stats?${new URLSearchParams({ ...q, limit: '1000' })}`);
      expect(r.status, r.text).to.equal(200);
      expect(r.body.data, JSON.stringify(q)).to.deep.equal(await reference(q));
    }
    const stats = await get('/stats?days=3');
    expect(stats.status).to.equal(200);
    expect(stats.body.usage).to.deep.equal(await referenceStats(3));
  }
  const rollupRows = (org: number) =>
    db().query<Record<string, unknown>>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, model, modality, passthrough, requests::int, input_tokens::int, output_tokens::int, units
         FROM usage_rollups WHERE org_id = :org ORDER BY 1, 2, 3, 4`,
      { type: QueryTypes.SELECT, replacements: { org: orgs[org] } },
    );

  it('is a clock task that rolls up each ended day not closed yet, once, and never the current day', async () => {
    const task = CLOCK_TASKS.find((t) => t.name === 'rollup-usage');
    expect(task, 'registered in CLOCK_TASKS').to.exist;
    expect(task!.schedule).to.equal('0 */5 * * * *');
    const window = (now: string) => Array.from({ length: CATCH_UP_DAYS }, (_, i) => addDays(now, i - CATCH_UP_DAYS));
    await db().query('DELETE FROM usage_rollup_days WHERE day >= :d', { replacements: { d: addDays(days[1], -CATCH_UP_DAYS) } });
    // a minute after midnight the day before has not settled (an insert may still be in flight): not yet
    expect(await rollupUsage(new Date(at(days[1], 0).getTime() + SETTLE_MS - 60_000))).to.deep.equal(window(days[1]).slice(0, -1));
    expect((await rollupRows(1)).map((r) => r.day)).to.deep.equal([]);
    // once it has: the ended days not closed, days[0] the last of them; not days[1], the current day
    expect(await rollupUsage(at(days[1], 0.5))).to.deep.equal([days[0]]);
    expect((await rollupRows(1)).map((r) => r.day)).to.deep.equal([days[0], days[0]]);
    // closed now: the next runs read nothing again
    expect(await rollupUsage(at(days[1], 0.6))).to.deep.equal([]);
    expect(await rollupUsage(at(days[1], 23))).to.deep.equal([]);
    // never a day the events' retention may have dropped: with 3 days kept, only the 2 days before today
    await db().query('DELETE FROM usage_rollup_days WHERE day >= :d AND day < :e', { replacements: { d: addDays(days[1], -CATCH_UP_DAYS), e: days[1] } });
    await withSettings({ USAGE_EVENTS_RETENTION_DAYS: '3' }, async () => {
      expect(await rollupUsage(at(days[1], 0.5))).to.deep.equal([addDays(days[1], -2), days[0]]);
    });
    expect(await rollupUsage(at(days[1], 0.5))).to.deep.equal(window(days[1]).slice(0, -2));
  });

  it('answers the stats family identically from rollups and from events, before and after rollups', async () => {
    await db().query('DELETE FROM usage_rollup_days WHERE day >= :d', { replacements: { d: days[0] } });
    await expectSameAsEvents(); // nothing closed: every row from events
    for (const day of days) await rollupUsage(at(day, 12)); // each run closes the day before
    // yesterday, as the clock does; never today (at noon of the day the file began: a run that crosses
    // midnight would otherwise close the day the file calls today)
    expect(await rollupUsage(at(today, 12))).to.deep.equal([days[4]]);
    const closed = await db().query<{ day: string }>(`SELECT to_char(day, 'YYYY-MM-DD') AS day FROM usage_rollup_days WHERE day >= :d ORDER BY 1`, { type: QueryTypes.SELECT, replacements: { d: days[0] } });
    expect(closed.map((r) => r.day)).to.deep.equal(days);

    const org1 = await rollupRows(1);
    expect(org1.filter((r) => r.day === days[2])).to.deep.equal([
      { day: days[2], model: models[0], modality: 'audio', passthrough: false, requests: 1, input_tokens: 0, output_tokens: 12, units: { audio_duration_ms: 1502, cost_micros: 40 } },
      { day: days[2], model: models[1], modality: 'audio', passthrough: false, requests: 1, input_tokens: 0, output_tokens: 0, units: { audio_duration_ms: 2500 } },
    ]);
    const org0 = await rollupRows(0);
    expect(org0.filter((r) => r.day === days[4])).to.deep.equal([
      { day: days[4], model: models[0], modality: 'chat', passthrough: false, requests: 1, input_tokens: 14, output_tokens: 5, units: {} },
      { day: days[4], model: models[0], modality: 'chat', passthrough: true, requests: 1, input_tokens: 3, output_tokens: 4, units: { cost_micros: 124 } },
    ]);
    expect((await rollupRows(0)).some((r) => r.day === today), 'today rolled up').to.equal(false);
    await expectSameAsEvents();

    // a second event in the same group sums units per key
    await event(at(days[2], 20), { org: 2, model: 1, modality: 'images', units: { images: 1, image_megapixels: 0.25 } });
    // an event written for a closed day (an import: the drainer stamps events when it writes them) is not
    // seen until that day is rolled up again; the clock leaves closed days alone ...
    const late = { group_by: 'day', org_id: orgs[1], from: `${days[3]}T00:00:00Z`, to: `${days[4]}T00:00:00Z` };
    const before = (await get(`/usage-stats?${new URLSearchParams(late)}`)).body.data;
    await event(at(days[3], 23.5), { org: 1, model: 0, modality: 'audio', input: 2, output: 3, units: { audio_duration_ms: 700 } });
    expect((await get(`/usage-stats?${new URLSearchParams(late)}`)).body.data).to.deep.equal(before);
    expect(await rollupUsage(at(days[4], 0.1))).to.deep.equal([]);
    expect((await get(`/usage-stats?${new URLSearchParams(late)}`)).body.data).to.deep.equal(before);
    // ... `gateway usage rollup --from <day> --to <day>` recomputes them (rollupDay, one day at a time)
    await rollupDay(days[3]);
    await rollupDay(days[2]);
    expect((await get(`/usage-stats?${new URLSearchParams(late)}`)).body.data).to.deep.equal([
      { day: days[3], requests: before[0].requests + 1, input_tokens: before[0].input_tokens + 2, output_tokens: before[0].output_tokens + 3, audio_duration_ms: before[0].audio_duration_ms + 700, passthrough_requests: 0 },
    ]);
    expect((await rollupRows(2)).find((r) => r.day === days[2] && r.modality === 'images')!.units).to.deep.equal({ images: 3, image_megapixels: 1.75 });
    await expectSameAsEvents();

    // recomputing changes nothing
    const snapshot = [await rollupRows(0), await rollupRows(1), await rollupRows(2)];
    for (const day of days) await rollupDay(day);
    expect([await rollupRows(0), await rollupRows(1), await rollupRows(2)]).to.deep.equal(snapshot);
    await expectSameAsEvents();

    // today is read from events: a new event shows at once
    await event(null, { org: 0, model: 0, modality: 'chat', input: 1, output: 1 });
    const now = (await get(`/usage-stats?group_by=day&org_id=${orgs[0]}&from=${today}`)).body.data;
    expect(now).to.deep.equal([{ day: today, requests: 2, input_tokens: 101, output_tokens: 51, audio_duration_ms: 0, passthrough_requests: 0 }]);
    await expectSameAsEvents();
  });

  it('gateway usage rollup backfills past days, which the stats then read from rollups', async function () {
    this.timeout(60_000); // seven CLI runs, each a process that loads the models (several seconds each beside other load)
    const old = ['2025-03-09', '2025-03-10', '2025-03-11'];
    await db().query('DELETE FROM usage_rollup_days WHERE day BETWEEN :a AND :b', { replacements: { a: old[0], b: old[2] } });
    await event(at(old[1], 5), { org: 0, model: 1, modality: 'chat', input: 8, output: 2 });
    const audio = await event(at(old[1], 6), { org: 0, model: 1, modality: 'audio', units: { audio_duration_ms: 40 } });
    const q = { group_by: 'day,modality', model: models[1], org_id: orgs[0], from: old[0], to: '2025-03-12' };
    const expected = await reference({ ...q, from: `${old[0]}T00:00:00Z`, to: '2025-03-12T00:00:00Z' });
    expect(expected).to.have.length(2);
    const out = await gateway('usage', 'rollup', '--from', old[0], '--to', old[2]);
    expect(out.stdout).to.include(`rolled up 3 day(s) from ${old[0]} to ${old[2]}`);
    const days = await db().query<{ day: string }>(`SELECT to_char(day, 'YYYY-MM-DD') AS day FROM usage_rollup_days WHERE day BETWEEN :a AND :b ORDER BY 1`, { type: QueryTypes.SELECT, replacements: { a: old[0], b: old[2] } });
    expect(days.map((d) => d.day)).to.deep.equal(old);
    // proof the rows come from the rollups: an event recorded after the backfill is not seen until the day is rolled up again
    await event(at(old[1], 7), { org: 0, model: 1, modality: 'chat', input: 1 });
    expect((await get(`/usage-stats?${new URLSearchParams(q)}`)).body.data).to.deep.equal(expected);
    await gateway('usage', 'rollup', '--from', old[1], '--to', old[1]);
    const after = await get(`/usage-stats?${new URLSearchParams(q)}`);
    expect(after.body.data).to.deep.equal(await reference({ ...q, from: `${old[0]}T00:00:00Z`, to: '2025-03-12T00:00:00Z' }));
    expect(after.body.data.find((r: { modality: string }) => r.modality === 'chat')).to.include({ requests: 2, input_tokens: 9 });
    // a group whose events are gone (a ledger correction) loses its rollup row at the next recompute
    await db().query('DELETE FROM usage_events WHERE request_id = :audio', { replacements: { audio } });
    await gateway('usage', 'rollup', '--from', old[1], '--to', old[1]);
    const corrected = (await get(`/usage-stats?${new URLSearchParams(q)}`)).body.data;
    expect(corrected.map((r: { modality: string }) => r.modality)).to.deep.equal(['chat']);
    expect(corrected).to.deep.equal(await reference({ ...q, from: `${old[0]}T00:00:00Z`, to: '2025-03-12T00:00:00Z' }));
    for (const bad of [['--from', 'yesterday'], ['--from', '2025-02-30'], ['--from', old[2], '--to', old[0]], ['--from', '2000-01-01']]) {
      const err = await gateway('usage', 'rollup', ...bad).then(() => null, (e: { code: number; stderr: string }) => e);
      expect(err, bad.join(' ')).to.not.equal(null);
      expect(err!.code).to.equal(1);
    }
  });

  it('refuses bad stats queries with invalid_request', async () => {
    for (const bad of ['from=yesterday', 'to=2026-13-45', 'group_by=week']) {
      const r = await get(`/usage-stats?${bad}`);
      expect(r.status, bad).to.equal(400);
      expect(r.body.error.code).to.equal('invalid_request');
    }
  });
});
