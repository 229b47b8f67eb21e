import { expect } from 'chai';
import { execFile } from 'child_process';
import path from 'path';
import { promisify } from 'util';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { Project } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../../../scripts/cli.js');
const gateway = (...args: string[]) => run(process.execPath, [cli, ...args], { env: process.env });
const refused = (...args: string[]) => gateway(...args).then(() => null, (err: { code: number; stderr: string }) => err);
const chatIn = (key: string, project: string) =>
  call('POST', '/v1/chat/completions', { headers: { ...keyHeader(key), 'SERVICE-PROJECT-ID': project }, json: { model: 'sim-chat', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] } });

describe("a project's budget from the CLI: gateway project create/update --budget-usd X --budget-period P", () => {
  beforeEach(resetSim);

  it('create with a budget refuses the project\'s requests (402 budget_exceeded), update changes and removes it; bad flags change nothing', async function () {
    this.timeout(60_000);
    const o = await buildOrg(env().redis);
    const made = await gateway('project', 'create', '--org', o.org.slug, '--slug', 'tight', '--budget-usd', '0.000001', '--budget-period', 'day', '--json');
    const out = JSON.parse(made.stdout);
    expect(out).to.include({ slug: 'tight', budget_usd: 0.000001, budget_period: 'day' });
    const p = (await Project.findByPk(out.id))!;
    expect(p.budgetMicros).to.equal(1);
    expect(p.budgetPeriod).to.equal('day');
    const r = await chatIn(o.key, 'tight');
    expect(r.status, r.text).to.equal(402);
    expect(r.body.error.code).to.equal('budget_exceeded');
    expect(r.body.error.message).to.contain("project's budget");

    // bad flags: refused with the field named, the project (and its budget) unchanged, no project made
    for (const [flags, said] of [[['--budget-usd', '-1'], /budget_usd/], [['--budget-usd', '5', '--budget-period', 'week'], /budget_period/], [['--budget-usd', 'ten'], /number/], [['--budget-period', 'day'], /--budget-usd/]] as const) {
      const e = await refused('project', 'update', '--org', o.org.slug, '--project', 'tight', ...flags);
      expect(e, flags.join(' ')).to.not.equal(null);
      expect(e!.code).to.equal(1);
      expect(e!.stderr).to.match(said);
      expect(e!.stderr).not.to.match(/\s+at\s/); // no stack trace
    }
    const badCreate = await refused('project', 'create', '--org', o.org.slug, '--slug', 'never', '--budget-usd', '1', '--budget-period', 'week');
    expect(badCreate!.code).to.equal(1);
    expect(await Project.count({ where: { orgId: o.org.id, slug: 'never' } })).to.equal(0);
    await p.reload();
    expect([p.budgetMicros, p.budgetPeriod]).to.deep.equal([1, 'day']);

    // a larger monthly budget lets the request through; "" removes the budget
    const up = JSON.parse((await gateway('project', 'update', '--org', o.org.slug, '--project', 'tight', '--budget-usd', '50', '--json')).stdout);
    expect(up).to.include({ budget_usd: 50, budget_period: 'month' });
    expect(up.budget).to.include({ limit_usd: 50, period: 'month', spent_usd: 0, reserved_usd: 0, remaining_usd: 50 });
    expect((await chatIn(o.key, 'tight')).status).to.equal(200);
    await usageSettled();
    const after = JSON.parse((await gateway('project', 'update', '--org', o.org.slug, '--project', 'tight', '--budget-usd', '50', '--json')).stdout);
    expect(after.budget.spent_usd, 'the request is spent from the project').to.be.greaterThan(0);
    expect(after.budget.remaining_usd).to.be.closeTo(50 - after.budget.spent_usd, 1e-9);
    const listed = (await gateway('project', 'list', '--org', o.org.slug)).stdout;
    expect(listed).to.match(/tight\s+active\s+tight\s+budget \$50\/month/);
    const none = JSON.parse((await gateway('project', 'update', '--org', o.org.slug, '--project', p.id, '--budget-usd', '', '--json')).stdout);
    expect(none).to.include({ budget_usd: null, budget_period: null, budget: null });
    await p.reload();
    expect(p.budgetMicros).to.equal(null);
  });
});
