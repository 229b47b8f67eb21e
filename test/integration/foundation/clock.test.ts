import crypto from 'crypto';
import fs from 'fs';
import path from 'path';
import cron from 'node-cron';
import { expect } from 'chai';
import { QueryTypes } from 'sequelize';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { waitFor } from '../../helpers/wait';
import { CLOCK_TASKS, startClock, type ClockTask } from '../../../workers/cron/clock';
import { config } from '../../../shared/config/env';
import { db } from '../../../shared/db/sequelize';
import { Image } from '../../../shared/db/models';
import { insertUsage } from '../../../shared/metering/usage';
import { addDays, dayStart, utcDay } from '../../../shared/metering/rollups';
import { chatUsage } from '../../helpers/usage';

/**
 * The clock process schedules CLOCK_TASKS with node-cron. Each test runs ONE task through
 * startClock on a once-a-second schedule and waits for that task's own effect, so a task list
 * that names the wrong function (or a clock that does not run what it schedules) fails here.
 */
describe('clock: each scheduled task runs its own function', () => {
  let clock: { stop(): void } | undefined;
  afterEach(() => clock?.stop());

  /** Runs the named task, and only it, every second. */
  const runEverySecond = (name: string) => {
    const task = CLOCK_TASKS.find((t) => t.name === name);
    expect(task, `${name} is in CLOCK_TASKS`).to.not.equal(undefined);
    clock = startClock(env().redis, [{ ...(task as ClockTask), schedule: '* * * * * *' }]);
  };

  it('skips a run of a task while its previous run still goes', async () => {
    let running = 0;
    let most = 0;
    let runs = 0;
    clock = startClock(env().redis, [
      {
        name: 'slow',
        schedule: '* * * * * *',
        run: async () => {
          runs++;
          most = Math.max(most, ++running);
          await new Promise((r) => setTimeout(r, 2_500));
          running--;
        },
      },
    ]);
    await new Promise((r) => setTimeout(r, 4_500));
    expect(runs, 'runs begun in 4.5 s of a task taking 2.5 s, scheduled every second').to.be.within(1, 2);
    expect(most, 'runs at once').to.equal(1);
  });

  it('every task has a valid schedule and a unique name', () => {
    for (const t of CLOCK_TASKS) expect(cron.validate(t.schedule), `${t.name}: ${t.schedule}`).to.equal(true);
    expect(new Set(CLOCK_TASKS.map((t) => t.name)).size).to.equal(CLOCK_TASKS.length);
    expect(CLOCK_TASKS.map((t) => t.name)).to.include.members(['expire-images', 'rollup-usage']);
  });

  it('expire-images deletes an expired image, row and file', async () => {
    const o = await buildOrg(env().redis);
    const r = await call('POST', '/v1/images/generations', { headers: keyHeader(o.key), json: { model: 'sim-image', prompt: 'clock', size: '256x256' } });
    expect(r.status, r.text).to.equal(200);
    const img = (await Image.findOne({ where: { requestId: r.headers.get('x-service-request-id')! } }))!;
    const file = path.join(config().imageStorageDir, img.storageKey);
    expect(fs.existsSync(file)).to.equal(true);
    await img.update({ expiresAt: new Date(Date.now() - 1000) });
    runEverySecond('expire-images');
    expect(await waitFor(async () => (await Image.findByPk(img.id)) === null, 10_000), 'row deleted').to.equal(true);
    expect(fs.existsSync(file), 'file deleted').to.equal(false);
  });

  it('rollup-usage rolls up an ended day not closed yet, and never today', async () => {
    const o = await buildOrg(env().redis);
    // the day before yesterday: settled whatever the time of day (yesterday is not until 00:02 UTC)
    const day = addDays(utcDay(new Date()), -2);
    const record = (at?: number) => chatUsage(o.org.id, `req_clock_${crypto.randomBytes(6).toString('hex')}`, { inputTokens: 11, outputTokens: 13, at });
    await insertUsage([record(dayStart(day).getTime() + 12 * 3_600_000), record()]);
    await db().query('DELETE FROM usage_rollup_days WHERE day = :day', { replacements: { day } });
    const rolled = () =>
      db().query<{ day: string; requests: number; input_tokens: number }>("SELECT to_char(day, 'YYYY-MM-DD') AS day, requests::int, input_tokens::int FROM usage_rollups WHERE org_id = :org", {
        type: QueryTypes.SELECT,
        replacements: { org: o.org.id },
      });
    expect(await rolled()).to.deep.equal([]);
    runEverySecond('rollup-usage');
    expect(await waitFor(async () => (await rolled()).length > 0, 10_000), 'a rollup row appeared').to.equal(true);
    await new Promise((r) => setTimeout(r, 1500)); // a run more: today is still not rolled up
    expect(await rolled()).to.deep.equal([{ day, requests: 1, input_tokens: 11 }]);
  });
});
