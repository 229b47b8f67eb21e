import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { env, resetSim } from '../helpers/harness';
import { buildOrg } from '../helpers/factories';
import { buildWebMember, WEB_PASSWORD } from '../helpers/web-client';
import { launchBrowser, pagePerTest, screenshots, signInAt } from '../helpers/browser';
import { usageSettled } from '../helpers/usage';
import { call, keyHeader } from '../helpers/http';

describe("a project's budget in a browser (dashboard projects page)", function () {
  this.timeout(60_000);
  let browser: Browser | undefined;
  before(async () => void (browser = await launchBrowser()));
  after(() => browser?.close());
  const pageNow = pagePerTest(() => browser!);

  it('an owner types a bad amount (kept, with the message), then a good one: saved, shown with what is spent and left', async () => {
    await resetSim();
    const o = await buildOrg(env().redis);
    const owner = await buildWebMember(o.org.id, 'owner');
    const page = pageNow();
    await signInAt(page, `${env().gw.url}/dashboard/sign-in`, owner.email, WEB_PASSWORD);
    await Promise.all([page.waitForNavigation(), page.click('header a:has-text("Projects")')]);
    const amount = `#budget_usd-${o.project.id}`;
    await page.fill(amount, '-2');
    await page.selectOption(`#budget_period-${o.project.id}`, 'day');
    // the browser's own min="0" check would stop it; the server's refusal is what is shown
    // the budget form is on the project's actions row, under its row of figures
    const form = `tr[data-actions-of="${o.project.id}"] form[data-test=project-budget-form]`;
    await page.$eval(form, (f) => f.setAttribute('novalidate', ''));
    await Promise.all([page.waitForNavigation(), page.click(`${form} button:has-text("Save budget")`)]);
    expect(await page.inputValue(amount)).to.equal('-2');
    expect(await page.inputValue(`#budget_period-${o.project.id}`)).to.equal('day');
    expect(await page.textContent('[data-test=field-error-budget_usd]')).to.equal('Budget (USD) must be greater than or equal to 0');
    // the message is right under the amount (it came after the button); "per" and the button stay level with the amount
    const box = async (sel: string) => (await page.locator(`${form} ${sel}`).boundingBox())!;
    const [input, message, per, button] = [await box(amount), await box('[data-test=field-error-budget_usd]'), await box(`#budget_period-${o.project.id}`), await box('button')];
    expect(message.y).to.be.at.least(input.y + input.height - 1);
    expect(message.x).to.be.closeTo(input.x, 1);
    expect(per.y).to.be.closeTo(input.y, 1);
    expect(button.y + button.height).to.be.closeTo(input.y + input.height, 2);
    await screenshots(page, 'dashboard-project-budget-refused');

    await page.fill(amount, '2.5');
    await Promise.all([page.waitForNavigation(), page.click(`${form} button:has-text("Save budget")`)]);
    expect(await page.textContent('[data-test=saved]')).to.include('Budget saved.');
    // a request in the project spends from it
    const r = await call('POST', '/v1/chat/completions', { headers: { ...keyHeader(o.key), 'SERVICE-PROJECT-ID': o.project.slug }, json: { model: 'sim-chat', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] } });
    expect(r.status).to.equal(200);
    await usageSettled();
    await page.reload();
    const cell = (await page.textContent(`[data-project="${o.project.id}"] [data-test=project-budget]`))!;
    expect(cell).to.match(/^\$0\.0000[1-9]\d{0,2} spent, \$0\.00 reserved of \$2\.50 per day; \$2\.(49|50) left$/);
    await screenshots(page, 'dashboard-project-budget');
  });
});
