import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { buildWebMember, dashboardAs, type WebReply } from '../../helpers/web-client';
import { ApiKey, Project } from '../../../shared/db/models';

/** The `value` of the input named `name` on a page ('' when it has none). */
const valueOf = (page: string, name: string) => new RegExp(`<input[^>]*name="${name}"[^>]*value="([^"]*)"`).exec(page)?.[1] ?? null;
const fieldError = (page: string, name: string) => new RegExp(`data-test="field-error-${name}">([^<]*)<`).exec(page)?.[1] ?? null;
const noStack = (r: WebReply) => expect(r.text).not.to.match(/at \w+ \(|node_modules/);

describe('dashboard forms: a refused form keeps what was typed and says what was wrong next to the field; a save says so', () => {
  beforeEach(resetSim);

  it('keys create form: a bad limit is shown next to its field, every typed value kept, no key made; a JSON client still gets the envelope', async () => {
    const o = await buildOrg(env().redis);
    const other = await Project.create({ orgId: o.org.id, name: 'Other', slug: 'other' });
    const web = await dashboardAs(await buildWebMember(o.org.id, 'owner'));
    const keysBefore = await ApiKey.count({ where: { orgId: o.org.id } });
    await web.get(`/dashboard/o/${o.org.slug}/keys`);
    const form = { name: 'prod key', project: other.id, models: 'sim-chat,sim-claude', rpm: '0', tpm: '5000', budget_usd: '12.5', budget_period: 'day', expires_at: '' };
    const r = await web.post(`/dashboard/o/${o.org.slug}/keys`, form);
    expect(r.status, r.text.slice(0, 300)).to.equal(400);
    noStack(r);
    expect(fieldError(r.text, 'rpm')).to.equal('Requests/min must be greater than or equal to 1'); // the form's words, not the API's field name
    expect(r.text).to.match(/name="rpm"[^>]*aria-invalid="true"/);
    expect(fieldError(r.text, 'tpm')).to.equal(null);
    expect({ name: valueOf(r.text, 'name'), models: valueOf(r.text, 'models'), rpm: valueOf(r.text, 'rpm'), tpm: valueOf(r.text, 'tpm'), budget: valueOf(r.text, 'budget_usd') })
      .to.deep.equal({ name: 'prod key', models: 'sim-chat,sim-claude', rpm: '0', tpm: '5000', budget: '12.5' });
    expect(r.text).to.include(`<option value="${other.id}" selected>`);
    expect(r.text).to.match(/<option value="day" selected>day<\/option>/);
    expect(r.text).not.to.include('data-test="new-key"');

    const bad = await web.post(`/dashboard/o/${o.org.slug}/keys`, { ...form, rpm: '', expires_at: 'next tuesday' });
    expect(bad.status).to.equal(400);
    expect(fieldError(bad.text, 'expires_at')).to.equal('Expires must be an ISO 8601 date, such as 2027-01-31');
    expect(valueOf(bad.text, 'expires_at')).to.equal('next tuesday');
    // year 0: a date JavaScript writes and PostgreSQL refuses (a 500 before)
    const year0 = await web.post(`/dashboard/o/${o.org.slug}/keys`, { ...form, rpm: '', expires_at: '0000-06-01' });
    expect(year0.status).to.equal(400);
    expect(fieldError(year0.text, 'expires_at')).to.equal('Expires must be a date between the years 0001 and 9999');

    const json = await web.post(`/dashboard/o/${o.org.slug}/keys`, form, { json: true });
    expect(json.status).to.equal(400);
    expect(json.body.error.code).to.equal('invalid_request');
    expect(await ApiKey.count({ where: { orgId: o.org.id } })).to.equal(keysBefore);

    // the same form, corrected, makes the key
    const ok = await web.post(`/dashboard/o/${o.org.slug}/keys`, { ...form, rpm: '60' });
    expect(ok.status).to.equal(201);
    expect(ok.text).to.include('data-test="new-key"');
    expect(valueOf(ok.text, 'name')).to.equal(''); // a fresh form after a success
    expect((await ApiKey.findOne({ where: { orgId: o.org.id, name: 'prod key' } }))!.rpm).to.equal(60);
  });

  it("a key's Edit limits form: a bad limit reopens that key's form with what was typed and the message next to the field; the key keeps its limits", async () => {
    const o = await buildOrg(env().redis);
    const web = await dashboardAs(await buildWebMember(o.org.id, 'owner'));
    await web.get(`/dashboard/o/${o.org.slug}/keys`);
    const made = await web.post(`/dashboard/o/${o.org.slug}/keys`, { name: 'limited', rpm: '60' });
    expect(made.status).to.equal(201);
    const key = (await ApiKey.findOne({ where: { orgId: o.org.id, name: 'limited' } }))!;
    const r = await web.post(`/dashboard/o/${o.org.slug}/keys/${key.id}/controls`, { models: 'sim-chat', rpm: '-5', tpm: '7000', budget_usd: '', budget_period: 'day', expires_at: '' });
    expect(r.status, r.text.slice(0, 300)).to.equal(400);
    noStack(r);
    expect(fieldError(r.text, 'rpm')).to.equal('Requests/min must be greater than or equal to 1'); // the form's words, not the API's field name
    expect(r.text).to.match(new RegExp(`<details open><summary>Edit limits of limited</summary><form method="post" action="[^"]*/${key.id}/controls"`));
    expect(r.text).to.match(new RegExp(`id="rpm-${key.id}" name="rpm" value="-5"`));
    expect(r.text).to.match(new RegExp(`id="tpm-${key.id}" name="tpm" value="7000"`));
    await key.reload();
    expect([key.rpm, key.tpm]).to.deep.equal([60, null]);
  });

  it('project form: a taken slug and a missing name are shown next to the field with what was typed; a created project is confirmed', async () => {
    const o = await buildOrg(env().redis);
    const web = await dashboardAs(await buildWebMember(o.org.id, 'member'));
    await web.get(`/dashboard/o/${o.org.slug}/projects`);
    const taken = await web.post(`/dashboard/o/${o.org.slug}/projects`, { name: 'Billing <team>', slug: 'proj' }); // buildOrg's project
    expect(taken.status).to.equal(409);
    noStack(taken);
    expect(fieldError(taken.text, 'slug')).to.equal('A project with slug &#39;proj&#39; already exists.');
    expect(valueOf(taken.text, 'name')).to.equal('Billing &lt;team&gt;');
    expect(valueOf(taken.text, 'slug')).to.equal('proj');
    expect(taken.text).not.to.include('data-test="saved"');

    const blank = await web.post(`/dashboard/o/${o.org.slug}/projects`, { name: '  ', slug: 'new-one' });
    expect(blank.status).to.equal(400);
    expect(fieldError(blank.text, 'name')).to.equal('A project needs a name.');
    expect(valueOf(blank.text, 'slug')).to.equal('new-one');
    expect(await Project.count({ where: { orgId: o.org.id } })).to.equal(1);

    const made = await web.post(`/dashboard/o/${o.org.slug}/projects`, { name: 'Billing team', slug: 'billing' });
    expect(made.status).to.equal(303);
    const after = await web.get(String(made.headers.location));
    expect(after.text).to.match(/data-test="saved"><p>Project created\.<\/p>/);
    expect(await Project.count({ where: { orgId: o.org.id, slug: 'billing' } })).to.equal(1);
  });
});
