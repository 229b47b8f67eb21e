import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { buildWebMember, dashboardAs } from '../../helpers/web-client';
import { AuditLog, Project } from '../../../shared/db/models';

const chatIn = (key: string, project: string) =>
  call('POST', '/v1/chat/completions', { headers: { ...keyHeader(key), 'SERVICE-PROJECT-ID': project }, json: { model: 'sim-chat', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] } });

describe("a project's budget on the dashboard's projects page (owners)", () => {
  beforeEach(resetSim);

  it('an owner sets a budget: saved, shown with spent/reserved/remaining, enforced (402); blank removes it; refusals keep what was typed; CSRF and members refused', async () => {
    const o = await buildOrg(env().redis);
    const web = await dashboardAs(await buildWebMember(o.org.id, 'owner'));
    const b = `/dashboard/o/${o.org.slug}/projects`;
    const page = await web.get(b);
    expect(page.text).to.include('data-test="project-budget">none');

    const saved = await web.post(`${b}/${o.project.id}/budget`, { budget_usd: '0.000001', budget_period: 'day' });
    expect(saved.status, saved.text.slice(0, 300)).to.equal(303);
    const shown = await web.get(`${b}?budget=${o.project.id}`);
    expect(shown.text).to.include('Budget saved.');
    expect(shown.text).to.include('$0.00 spent, $0.00 reserved of $0.000001 per day; $0.000001 left');
    await o.project.reload();
    expect([o.project.budgetMicros, o.project.budgetPeriod]).to.deep.equal([1, 'day']);
    const r = await chatIn(o.key, o.project.slug);
    expect(r.status).to.equal(402);
    expect(r.body.error.code).to.equal('budget_exceeded');
    expect(await AuditLog.count({ where: { targetId: o.project.id, path: `/dashboard/o/${o.org.slug}/projects/${o.project.id}/budget` } })).to.equal(1);

    // refused: the page again at 400, the message next to the field, what was typed kept, nothing changed
    await web.get(b);
    const bad = await web.post(`${b}/${o.project.id}/budget`, { budget_usd: '-3', budget_period: 'month' });
    expect(bad.status).to.equal(400);
    expect(bad.text).to.include('data-test="field-error-budget_usd"');
    expect(bad.text).to.include('value="-3"');
    expect(bad.text).to.match(/<option value="month" selected>/);
    await web.get(b);
    const badPeriod = await web.post(`${b}/${o.project.id}/budget`, { budget_usd: '5', budget_period: 'week' });
    expect(badPeriod.status).to.equal(400);
    expect(badPeriod.text).to.include('data-test="field-error-budget_period"');
    await o.project.reload();
    expect([o.project.budgetMicros, o.project.budgetPeriod]).to.deep.equal([1, 'day']);

    // without the CSRF token: 403, nothing changed
    const forged = await web.post(`${b}/${o.project.id}/budget`, { _csrf: 'forged', budget_usd: '100' });
    expect(forged.status).to.equal(403);
    // a member may not set it
    const member = await dashboardAs(await buildWebMember(o.org.id, 'member'));
    expect((await member.get(b)).text).not.to.include('project-budget-form');
    const byMember = await member.post(`${b}/${o.project.id}/budget`, { budget_usd: '100' });
    expect(byMember.status).to.equal(403);
    // another org's project: 404
    const other = await buildOrg(env().redis);
    await web.get(b);
    expect((await web.post(`${b}/${other.project.id}/budget`, { budget_usd: '100' })).status).to.equal(404);
    await o.project.reload();
    expect(o.project.budgetMicros).to.equal(1);
    expect((await Project.findByPk(other.project.id))!.budgetMicros).to.equal(null);

    // blank removes it: the request goes through
    await web.get(b);
    expect((await web.post(`${b}/${o.project.id}/budget`, { budget_usd: '', budget_period: 'month' })).status).to.equal(303);
    expect((await web.get(b)).text).to.include('data-test="project-budget">none');
    expect((await chatIn(o.key, o.project.slug)).status).to.equal(200);
  });
});
