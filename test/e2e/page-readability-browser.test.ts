import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { env } from '../helpers/harness';
import { buildOrg } from '../helpers/factories';
import { buildWebMember, WEB_PASSWORD } from '../helpers/web-client';
import { consoleOperator, pagePerTest, screenshots, signInAt } from '../helpers/browser';
import { createApiKey, createProject } from '../../shared/tenancy/ops';
import { ApiKey, UsageEvent } from '../../shared/db/models';
import { poolModel, simDeployment } from '../helpers/pool-models';
import { call, keyHeader } from '../helpers/http';
import { usageSettled } from '../helpers/usage';
import { usdMicros } from '../../api/web/format';

/**
 * The form controls of every page a person reaches have a name a screen reader reads out: a
 * `<label for>` around or tied to them, or an aria-label; every button says what it does.
 */
/** Runs in the page (no DOM types here): the controls without a name, as the start of their markup. */
const UNNAMED = `(() => {
  const text = (n) => ((n && n.textContent) || '').trim() !== '';
  const out = [];
  for (const e of document.querySelectorAll('input, select, textarea, button')) {
    if (e.type === 'hidden') continue;
    const labelled = Array.from(e.labels || []).some(text) || (e.getAttribute('aria-label') || '').trim() !== ''
      || (e.getAttribute('aria-labelledby') || '').split(/\\s+/).some((id) => text(document.getElementById(id)));
    if (!(labelled || (e.tagName === 'BUTTON' && text(e)))) out.push(e.outerHTML.slice(0, 160));
  }
  return out;
})()`;
const unnamedControls = (page: Page) => page.evaluate(UNNAMED) as Promise<string[]>;

/** Runs in the page: the text inputs whose placeholder is cut off by the box (the example is unreadable). */
const CUT_PLACEHOLDERS = `(() => {
  const ctx = document.createElement('canvas').getContext('2d');
  const out = [];
  for (const e of document.querySelectorAll('input[placeholder]')) {
    const cs = getComputedStyle(e);
    ctx.font = cs.font;
    const room = e.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    if (e.checkVisibility() && ctx.measureText(e.placeholder).width > room + 1) out.push(e.outerHTML.slice(0, 160));
  }
  return out;
})()`;

/** At 1280 and at 390 px: a page or a card wider than the screen (it scrolls sideways), and inputs whose example is cut off. */
async function layoutFaults(page: Page, name: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 844 });
    const over = ((await page.evaluate('document.documentElement.scrollWidth')) as number) - width;
    if (over > 0) out[`${name} wider than ${width} px`] = [`by ${over} px`];
    const scrolling = (await page.evaluate(`Array.from(document.querySelectorAll('main .card')).filter((c) => c.scrollWidth > c.clientWidth).map((c) => c.outerHTML.slice(0, 120))`)) as string[];
    if (scrolling.length) out[`${name} cards scrolling sideways at ${width} px`] = scrolling;
    const cut = (await page.evaluate(CUT_PLACEHOLDERS)) as string[];
    if (cut.length) out[`${name} placeholder cut off at ${width} px`] = cut;
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  return out;
}

/** Runs in the page: the text of each element matched by `selector` that runs over more than one line. */
const brokenAcrossLines = (page: Page, selector: string) => page.evaluate(`Array.from(document.querySelectorAll(${JSON.stringify(selector)})).filter((e) => {
  const r = document.createRange();
  r.selectNodeContents(e);
  return new Set(Array.from(r.getClientRects()).map((x) => Math.round(x.top))).size > 1;
}).map((e) => e.textContent)`) as Promise<string[]>;

/** A cost as billing dashboards write it: cents with thousands separators, or under a dollar to its third significant digit (no trailing zeros past the cents). */
const BILLING_COST = /^\$(\d{1,3}(,\d{3})*\.\d{2}|0\.\d{2}\d*[1-9])$/;

describe('dashboard and console pages read well in a browser: named controls, unbroken dates and ids, costs as billing dashboards write them, a skip link, no sideways scrolling', function () {
  this.timeout(120_000);
  const suite = consoleOperator();
  const page = pagePerTest(() => suite.browser);

  it('every form control of an owner\'s dashboard pages and the operator\'s console pages has a name; none is wider than the screen at 1280 or 390 px or cuts its example off', async () => {
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    await buildWebMember(o.org.id, 'member');
    await createApiKey(env().redis, { orgId: o.org.id, name: 'labelled' });
    await createProject(env().redis, o.org.id, 'Labelled', 'labelled');
    await signInAt(page(), `${env().gw.url}/dashboard/sign-in`, owner.email, WEB_PASSWORD);
    const found: Record<string, string[]> = {};
    const dash = `${env().gw.url}/dashboard/o/${o.org.slug}`;
    for (const p of ['', '/activity', '/models', '/keys', '/projects', '/members', '/search']) {
      await page().goto(`${dash}${p}`);
      found[`dashboard${p || '/'}`] = await unnamedControls(page());
      Object.assign(found, await layoutFaults(page(), `dashboard${p || '/'}`));
    }
    await suite.signIn(page());
    for (const p of ['/', `/orgs/${o.org.id}`, `/orgs/${o.org.id}/activity`, '/create', '/keys', '/switches', '/users', '/pools', '/audit']) {
      await page().goto(`${suite.admin.url}${p}`);
      found[`console${p}`] = await unnamedControls(page());
      Object.assign(found, await layoutFaults(page(), `console${p}`));
    }
    expect(Object.fromEntries(Object.entries(found).filter(([, v]) => v.length))).to.deep.equal({});
  });

  it('a key\'s creation date stays on one line at 1280 px, even beside a rotated key\'s grace note', async () => {
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    await createApiKey(env().redis, { orgId: o.org.id, userId: owner.id, name: 'the owner\'s' }); // an email in the Owner column
    await ApiKey.update({ lastUsedAt: new Date() }, { where: { id: o.keyId } }); // a last-used time
    await signInAt(page(), `${env().gw.url}/dashboard/sign-in`, owner.email, WEB_PASSWORD);
    await page().goto(`${env().gw.url}/dashboard/o/${o.org.slug}/keys`);
    await page().click(`tr[data-actions-of="${o.keyId}"] summary:has-text("Rotate")`);
    await Promise.all([page().waitForNavigation(), page().click(`tr[data-actions-of="${o.keyId}"] button[data-test=confirm]`)]);
    await page().click(`tr[data-actions-of="${o.keyId}"] summary:has-text("Edit limits")`);
    // the lines a date's text runs over (the element that holds it, or the cell's first text)
    const lines = (cell: string, at: string) => page().evaluate(`(() => {
      const td = document.querySelector('tr[data-key-id="${o.keyId}"] ${cell}');
      const r = document.createRange();
      r.selectNodeContents(td.querySelector('${at}') || td.firstChild);
      return new Set(Array.from(r.getClientRects()).map((x) => Math.round(x.top))).size;
    })()`);
    expect(await lines('td[data-label=Created]', '.nowrap')).to.equal(1);
    expect(await lines('[data-test=grace]', '.nowrap')).to.equal(1); // old secret until 2026-12-05 18:46
    expect(await lines('td[data-label="Last used"]', '.nowrap')).to.equal(1);

  });

  it('a row\'s repeated buttons and boxes say whose they are (members page, web search members)', async () => {
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    const member = await buildWebMember(o.org.id, 'member');
    await signInAt(page(), `${env().gw.url}/dashboard/sign-in`, owner.email, WEB_PASSWORD);
    await page().goto(`${env().gw.url}/dashboard/o/${o.org.slug}/search`);
    for (const who of [owner.email, member.email]) {
      expect(await page().getByRole('button', { name: `Save the search settings of ${who}`, exact: true }).count(), who).to.equal(1);
      expect(await page().getByRole('checkbox', { name: `on for ${who}`, exact: true }).count(), who).to.equal(1);
    }
    expect(await page().getByRole('button', { name: 'Save', exact: true }).count()).to.equal(0);
    await page().goto(`${env().gw.url}/dashboard/o/${o.org.slug}/members`);
    for (const who of [owner.email, member.email]) expect(await page().getByRole('button', { name: `Change role of ${who}`, exact: true }).count(), who).to.equal(1);
    // what a sighted person sees is unchanged
    const extra = (await page().locator(`tr[data-user="${member.id}"] button:has-text("Change role") .sr-only`).boundingBox())!;
    expect(extra.width * extra.height).to.be.at.most(1);
  });
  it('ids stay whole: a project\'s id and slug and a pool\'s model and deployment names are not broken at their hyphens at 1280 or 390 px, and a project\'s name has room at 1280 px', async () => {
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    const name = 'Customer support assistant (production)';
    const p = await createProject(env().redis, o.org.id, name, 'customer-support-assistant-prod');
    // names as long as real ones that fit on a phone's line (the upstream gets `-<8 hex>`; a longer one wraps where its line ends)
    const pool = await poolModel([simDeployment('azure-eastus2-gpt-4o-mini'), simDeployment('openai-us-west-fallback-2')], { fallbacks: ['sim-chat'] });
    await signInAt(page(), `${env().gw.url}/dashboard/sign-in`, owner.email, WEB_PASSWORD);
    await page().goto(`${env().gw.url}/dashboard/o/${o.org.slug}/projects`);
    const found: Record<string, string[]> = {};
    for (const width of [1280, 390]) {
      await page().setViewportSize({ width, height: 844 });
      found[`project ids at ${width} px`] = await brokenAcrossLines(page(), `tr[data-project="${p.id}"] code`);
    }
    Object.assign(found, await layoutFaults(page(), 'dashboard/projects'));
    // the name is on one line at 1280 px (it wrapped onto three, squeezed by the slug, the id and the budget form)
    const nameLines = await page().evaluate(`(() => {
      const r = document.createRange();
      r.selectNodeContents(document.querySelector('tr[data-project="${p.id}"] td:first-child').firstChild);
      return [r.toString(), new Set(Array.from(r.getClientRects()).map((x) => Math.round(x.top))).size];
    })()`) as [string, number];
    found['project name on more than one line at 1280 px'] = nameLines[1] === 1 && nameLines[0] === name ? [] : [`${nameLines[0]}: ${nameLines[1]} lines`];
    const projectIds = await page().locator(`tr[data-project="${p.id}"] code`).allTextContents();

    await suite.signIn(page());
    await page().goto(`${suite.admin.url}/pools`);
    for (const width of [1280, 390]) {
      await page().setViewportSize({ width, height: 844 });
      // model ids and deployment names whole; an upstream name (`code.id.wrap`, as long as an ARN) wraps where its line ends,
      // which depends on every other pool the table shows (a shard's database holds other suites' pools)
      found[`pool ids at ${width} px`] = await brokenAcrossLines(page(), `tr[data-pool="${pool}"] code:not(.wrap)`);
    }
    Object.assign(found, await layoutFaults(page(), 'console/pools'));
    const poolIds = await page().locator(`tr[data-pool="${pool}"] code`).allTextContents();
    expect(Object.fromEntries(Object.entries(found).filter(([, v]) => v.length))).to.deep.equal({});
    // and the checks above saw every id
    expect(projectIds).to.include.members([p.id, 'customer-support-assistant-prod']);
    expect(poolIds).to.include.members([pool, 'azure-eastus2-gpt-4o-mini', 'openai-us-west-fallback-2', 'sim-chat']);
  });

  it('costs read as on a billing dashboard: $0.00 for none, cents with thousands separators, a few millionths to three significant digits', async () => {
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    await UsageEvent.create({ requestId: `req_costs_${o.org.slug}_a`, orgId: o.org.id, model: 'sim-image', modality: 'image', units: { cost_micros: 1_234_567_890 } });
    await UsageEvent.create({ requestId: `req_costs_${o.org.slug}_b`, orgId: o.org.id, model: 'sim-chat', modality: 'chat', inputTokens: 0, outputTokens: 0, units: { cost_micros: 123 } });
    await signInAt(page(), `${env().gw.url}/dashboard/sign-in`, owner.email, WEB_PASSWORD);
    await page().goto(`${env().gw.url}/dashboard/o/${o.org.slug}`);
    expect(await page().textContent('[data-test=usage-total-cost]')).to.equal('$1,234.57');
    const costs = await page().locator('[data-test=usage-totals] td[data-label=Cost]').allTextContents();
    expect(costs.sort()).to.deep.equal(['$0.000123', '$1,234.57']);
    for (const table of ['usage-by-key', 'usage-by-project']) {
      for (const c of await page().locator(`[data-test=${table}] td[data-label=Cost]`).allTextContents()) expect(c).to.match(BILLING_COST);
    }
    // the cost chart: its axis in whole dollars from $1,000, a bar's figure as the tables write it
    expect(await page().locator('.chart:has(h2:has-text("Cost per day")) svg.yaxis text').allTextContents()).to.deep.equal(['$0', '$1,000', '$2,000']);
    expect(await page().locator('.chart:has(h2:has-text("Cost per day")) rect title').allTextContents()).to.have.members([
      `${new Date().toISOString().slice(0, 10)} sim-image (image): $1,234.57`, `${new Date().toISOString().slice(0, 10)} sim-chat (chat): $0.000123`,
    ]);
    // a range without traffic
    await page().goto(`${env().gw.url}/dashboard/o/${o.org.slug}?from=2020-01-01&to=2020-01-02`);
    expect(await page().textContent('[data-test=usage-total-cost]')).to.equal('$0.00');
    // a request's cost in the Activity list, as the usage tables write it; its CSV export keeps the exact micro-dollars
    const sent = await call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model: 'sim-chat', messages: [{ role: 'user', content: 'what does it cost?' }] } });
    expect(sent.status).to.equal(200);
    await usageSettled();
    await page().goto(`${env().gw.url}/dashboard/o/${o.org.slug}/activity`);
    const shown = (await page().textContent('[data-test=activity] td[data-label=Cost]'))!;
    const csv = (await (await page().request.get(`${env().gw.url}/dashboard/o/${o.org.slug}/activity.csv`)).text()).trim().split('\r\n').map((l) => l.split(','));
    const micros = Number(csv[1][csv[0].indexOf('cost_micros')]);
    expect(micros).to.be.greaterThan(0).and.lessThan(10_000); // a few millionths of a dollar, under a cent
    expect(shown).to.match(BILLING_COST).and.equal(usdMicros(micros));
  });

  it('every page starts with a "Skip to content" link: the first thing Tab reaches, shown when focused, and it moves the focus to the main content', async () => {
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    const focused = () => page().evaluate(`(() => { const e = document.activeElement; return e ? [e.tagName, e.id, (e.textContent || '').trim().slice(0, 40)] : null; })()`) as Promise<string[] | null>;
    const check = async (where: string) => {
      const link = page().locator('a.skip');
      expect((await link.boundingBox())?.width ?? 0, `${where}: hidden until focused`).to.be.at.most(1);
      await page().keyboard.press('Tab');
      expect(await focused(), where).to.deep.equal(['A', '', 'Skip to content']);
      const box = (await link.boundingBox())!;
      expect(box.width, `${where}: shown when focused`).to.be.greaterThan(50);
      expect(box.y, where).to.be.at.least(0);
      await page().keyboard.press('Enter');
      expect((await focused())?.slice(0, 2), where).to.deep.equal(['MAIN', 'main']);
      // the next Tab goes on inside the main content, past the header's navigation
      await page().keyboard.press('Tab');
      expect(await page().evaluate('!!document.activeElement.closest("main")'), `${where}: Tab after the skip`).to.equal(true);
    };
    await page().goto(`${env().gw.url}/dashboard/sign-in`);
    await check('dashboard sign-in');
    await signInAt(page(), `${env().gw.url}/dashboard/sign-in`, owner.email, WEB_PASSWORD);
    for (const p of ['', '/projects']) {
      await page().goto(`${env().gw.url}/dashboard/o/${o.org.slug}${p}`);
      await check(`dashboard${p || '/'}`);
    }
    await page().goto(`${suite.admin.url}/sign-in`);
    await check('console sign-in');
    await suite.signIn(page());
    await page().goto(`${suite.admin.url}/orgs/${o.org.id}`);
    await check('console/orgs/{id}');
    await page().reload();
    await page().keyboard.press('Tab');
    await screenshots(page(), 'console-skip-link');
  });
});
